"""Scoring In-Car predictions: per-dialogue statistics, corpus metrics, bootstrap CIs.

Metric names (all on a 0-100 scale, like the published figures):

* ``incar.match``, ``incar.succ_f1`` (with ``incar.succ_precision``, ``incar.succ_recall``);
* ``incar.bleu`` -- sacrebleu corpus BLEU, 13a defaults, normalized delexicalized text;
* ``incar.bleu_lineage`` -- the lineage's own corpus BLEU (GALAXY ``KvretEvaluator``), computed
  as it computes it on its tokens: responses as given, wrapped in ``<sos_r>`` … ``<eos_r>`` and
  re-delexicalized; the BLEU behind published figures;
* ``incar.combined`` = (Match + SuccF1) × 0.5 + ``incar.bleu``;
* ``incar.combined_lineage`` = (Match + SuccF1) × 0.5 + ``incar.bleu_lineage``, the number to
  set beside published Combined scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from todeval.core.records import CIMethod, MetricSummary, Summary
from todeval.errors import BadInputError
from todeval.scoring.incar._bootstrap import Statistic, corpus_summary
from todeval.scoring.incar._gold import GoldDialogue, GoldSplit, Split, load_gold
from todeval.scoring.incar._metrics import (
    N_BLEU_STATS,
    SacreBleuStats,
    combined,
    lineage_bleu,
    lineage_bleu_stats,
    lineage_text,
    match_dialogue,
    prf,
    slot_types,
    succ_counts,
)
from todeval.scoring.incar._ontology import INTENTS, Lexicon, load_lexicon
from todeval.scoring.incar._predictions import IncarPredictions, PredictedTurn, parse_predictions
from todeval.scoring.incar._text import normalize
from todeval.stats import summarize_metric
from todeval.stats.bootstrap import DEFAULT_RESAMPLES

BENCHMARK = "incar"
METRICS: dict[str, str] = {
    "incar.match": "Match",
    "incar.succ_f1": "SuccF1",
    "incar.succ_precision": "SuccF1 precision",
    "incar.succ_recall": "SuccF1 recall",
    "incar.bleu": "BLEU (modern: sacrebleu 13a)",
    "incar.bleu_lineage": "BLEU (lineage: GALAXY KvretEvaluator)",
    "incar.combined": "Combined (modern: sacrebleu BLEU)",
    "incar.combined_lineage": "Combined (lineage: GALAXY KvretEvaluator)",
}

# Columns of the per-dialogue statistics matrix.
_MATCHED, _EVALUATED, _TP, _FP, _FN = range(5)
_SACRE = slice(5, 5 + N_BLEU_STATS)
_LINEAGE = slice(5 + N_BLEU_STATS, 5 + 2 * N_BLEU_STATS)
_N_COLUMNS = 5 + 2 * N_BLEU_STATS


class DialogueScore(BaseModel):
    """What one scored dialogue contributed."""

    model_config = ConfigDict(extra="forbid")

    dialogue_id: str
    intent: str
    turns_scored: int
    match: bool | None = Field(description="None: not counted in Match (no gold [value turn)")
    gold_types: list[str] = Field(description="SuccF1 slot types of the gold responses")
    predicted_types: list[str] = Field(description="SuccF1 slot types of the predictions")


class IncarResult(BaseModel):
    """Point values, the :class:`Summary` with CIs, and per-dialogue details."""

    model_config = ConfigDict(extra="forbid")

    split: Split
    n_dialogues: int = Field(description="dialogues in the split")
    n_scored: int = Field(description="dialogues present in the predictions")
    n_turns: int = Field(description="predicted turns scored")
    match_evaluated: int = Field(description="dialogues counted in Match")
    gold_states: bool = Field(description="True when gold states replaced missing predictions")
    match: float | None
    succ_f1: float
    succ_precision: float
    succ_recall: float
    bleu: float
    bleu_lineage: float
    combined: float | None
    combined_lineage: float | None
    summary: Summary
    dialogues: list[DialogueScore]


def _normalize_state(state: Mapping[str, str], intent: str) -> dict[str, str]:
    """Predicted state in gold form: slot names without an intent prefix, values normalized.

    A slot prefixed with another intent than the dialogue's is dropped, as GALAXY drops it.
    """
    out: dict[str, str] = {}
    for slot, value in state.items():
        name = slot.strip().lower()
        prefix, _, rest = name.partition("-")
        if rest and prefix in INTENTS:
            if prefix != intent:
                continue
            name = rest
        out[name] = normalize(value)
    return out


def _dialogue_stats(
    gold: GoldDialogue,
    turns: list[PredictedTurn],
    use_gold_states: bool,
    lexicon: Lexicon,
    sacre: SacreBleuStats,
) -> tuple[np.ndarray, DialogueScore]:
    k = len(turns)
    gen_responses = [normalize(t.response) for t in turns]
    gold_responses = [t.response for t in gold.turns]
    gold_states = [t.state for t in gold.turns]
    if use_gold_states:
        gen_states = gold_states[:k]
    else:
        gen_states = [_normalize_state(t.state or {}, gold.intent) for t in turns]
    given = [t.response for t in turns]  # the lineage looks for "[value" in them as given
    matched = match_dialogue(given, gen_states, gold_responses, gold_states, lexicon)
    # The lineage's evaluator takes generated responses as given (no re-normalization).
    gen_clean = [lineage_text(t.response, lexicon) for t in turns]
    gold_clean = [lineage_text(r, lexicon) for r in gold_responses]
    gen_types, gold_types = slot_types(gen_clean), slot_types(gold_clean)
    row = np.zeros(_N_COLUMNS)
    row[_MATCHED] = float(bool(matched))
    row[_EVALUATED] = float(matched is not None)
    row[_TP], row[_FP], row[_FN] = succ_counts(gen_types, gold_types)
    for i in range(k):
        row[_SACRE] += sacre.turn(gen_responses[i], gold_responses[i])
        row[_LINEAGE] += lineage_bleu_stats(gen_clean[i], gold_clean[i])
    score = DialogueScore(
        dialogue_id=gold.dialogue_id,
        intent=gold.intent,
        turns_scored=k,
        match=matched,
        gold_types=sorted(gold_types),
        predicted_types=sorted(gen_types),
    )
    return row, score


def _match(s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s[:, _EVALUATED] > 0, 100.0 * s[:, _MATCHED] / s[:, _EVALUATED], np.nan)


def _prf(s: np.ndarray) -> tuple[np.ndarray, ...]:
    return prf(s[:, _TP], s[:, _FP], s[:, _FN])


def _bleu(s: np.ndarray) -> np.ndarray:
    return SacreBleuStats.corpus(s[:, _SACRE])


def _bleu_lineage(s: np.ndarray) -> np.ndarray:
    return lineage_bleu(s[:, _LINEAGE])


STATISTICS: dict[str, Statistic] = {
    "incar.succ_f1": lambda s: _prf(s)[2],
    "incar.succ_precision": lambda s: _prf(s)[0],
    "incar.succ_recall": lambda s: _prf(s)[1],
    "incar.bleu": _bleu,
    "incar.bleu_lineage": _bleu_lineage,
    "incar.combined": lambda s: combined(_match(s), _prf(s)[2], _bleu(s)),
    "incar.combined_lineage": lambda s: combined(_match(s), _prf(s)[2], _bleu_lineage(s)),
}


def _point(stats: np.ndarray, statistic: Statistic) -> float | None:
    value = float(statistic(stats.sum(axis=0, keepdims=True))[0])
    return None if np.isnan(value) else value


def score_predictions(
    predictions: IncarPredictions,
    gold: GoldSplit,
    *,
    lexicon: Lexicon | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> IncarResult:
    """Score validated predictions against a preprocessed gold split."""
    lexicon = lexicon or load_lexicon()
    sacre = SacreBleuStats()
    by_id = gold.by_id()
    use_gold_states = not predictions.has_states
    rows: list[np.ndarray] = []
    scores: list[DialogueScore] = []
    for dialogue in gold.dialogues:  # split order, whatever the file's order
        turns = predictions.dialogues.get(dialogue.dialogue_id)
        if turns is None:
            continue
        row, score = _dialogue_stats(
            by_id[dialogue.dialogue_id], turns, use_gold_states, lexicon, sacre
        )
        rows.append(row)
        scores.append(score)
    if not rows:
        raise BadInputError("predictions: no dialogue of the split to score")
    stats = np.vstack(rows)
    intents = [s.intent for s in scores]
    metrics: dict[str, MetricSummary] = {
        "incar.match": summarize_metric(
            {s.dialogue_id: [] if s.match is None else [100.0 * s.match] for s in scores},
            {s.dialogue_id: s.intent for s in scores},
            seed=seed,
            label="incar.match",
            resamples=resamples,
        )
    }
    for name, statistic in STATISTICS.items():
        metrics[name] = corpus_summary(
            stats, intents, statistic, seed=seed, label=name, resamples=resamples
        )
    metrics = {name: metrics[name] for name in METRICS}
    n_missing = len(gold.dialogues) - len(scores)
    summary = Summary(
        benchmark=BENCHMARK,
        n_episodes=len(scores),
        outcomes={"gold_states" if use_gold_states else "predicted_states": len(scores)},
        excluded={"missing": n_missing} if n_missing else {},
        metrics=metrics,
        ci=CIMethod(method="percentile bootstrap over dialogues", resamples=resamples, seed=seed),
    )
    point = {name: _point(stats, statistic) for name, statistic in STATISTICS.items()}
    return IncarResult(
        split=gold.split,
        n_dialogues=len(gold.dialogues),
        n_scored=len(scores),
        n_turns=sum(s.turns_scored for s in scores),
        match_evaluated=int(stats[:, _EVALUATED].sum()),
        gold_states=use_gold_states,
        match=_point(stats, _match),
        succ_f1=point["incar.succ_f1"] or 0.0,
        succ_precision=point["incar.succ_precision"] or 0.0,
        succ_recall=point["incar.succ_recall"] or 0.0,
        bleu=point["incar.bleu"] or 0.0,
        bleu_lineage=point["incar.bleu_lineage"] or 0.0,
        combined=point["incar.combined"],
        combined_lineage=point["incar.combined_lineage"],
        summary=summary,
        dialogues=scores,
    )


def evaluate(
    predictions: Mapping[str, Any] | IncarPredictions,
    split: Split = "test",
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> IncarResult:
    """Score In-Car predictions (``{dialogue_id: [{"response", "state"}, ...]}``).

    Raises :class:`~todeval.errors.BadInputError` for malformed predictions.
    """
    lexicon = load_lexicon()
    gold = load_gold(split, lexicon)
    parsed = parse_predictions(predictions, gold)
    return score_predictions(parsed, gold, lexicon=lexicon, seed=seed, resamples=resamples)
