"""``evaluate``: score a MultiWOZ prediction file or mapping with the standard rules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from todeval.errors import UsageError, choice_error
from todeval.scoring.multiwoz._bleu import BleuStatistics, corpus_bleu, sum_stats
from todeval.scoring.multiwoz._corpus import CorpusData
from todeval.scoring.multiwoz._database import VenueDatabase
from todeval.scoring.multiwoz._domains import (
    ACTIVE_DOMAIN_MODES,
    ActiveDomainsMode,
)
from todeval.scoring.multiwoz._domains import active_domains as domains_per_turn
from todeval.scoring.multiwoz._dst import DstScorer
from todeval.scoring.multiwoz._io import Predictions, read_prediction_file, validate_predictions
from todeval.scoring.multiwoz._models import (
    METRICS,
    DialogueScore,
    DomainRates,
    DstScores,
    Metric,
    MultiwozResult,
    PredictedTurn,
    RichnessScores,
    ScoringOptions,
)
from todeval.scoring.multiwoz._normalize import ResponseNormalizer, State, normalize_state
from todeval.scoring.multiwoz._richness import richness, tokenize
from todeval.scoring.multiwoz._success import score_dialogue

DEFAULT_METRICS: tuple[Metric, ...] = METRICS


def _percent(hits: int, total: int) -> float | None:
    return 100.0 * hits / total if total else None


def parse_metrics(metrics: Iterable[str]) -> list[Metric]:
    """Validated metric names in canonical order (``UsageError`` for unknown ones)."""
    wanted = set()
    for m in metrics:
        if m not in METRICS:
            raise choice_error("metric", m, METRICS)
        wanted.add(m)
    if not wanted:
        raise UsageError(f"no metric selected; choose from {', '.join(METRICS)}")
    return [m for m in METRICS if m in wanted]


def evaluate(
    predictions: Mapping[str, Any] | str | Path,
    *,
    metrics: Iterable[str] = DEFAULT_METRICS,
    active_domains: ActiveDomainsMode = "given",
    corpus: CorpusData | None = None,
    database: VenueDatabase | None = None,
) -> MultiwozResult:
    """Score predictions in the community format against the MultiWOZ test set.

    ``predictions`` is a path to a ``.json``/``.json.gz`` file or the parsed mapping
    ``{dialogue_id: [{"response", "state"?, "active_domains"?}, ...]}``. Missing dialogues
    and turns are fine (only given turns count); if any turn lacks a state, the gold
    MultiWOZ 2.2 states are used for every turn. ``active_domains`` chooses where the
    active domains come from (``given``, ``state`` or ``placeholders``). Pass a shared
    ``corpus``/``database`` to reuse loaded data across calls.

    Raises :class:`~todeval.errors.BadInputError` for malformed predictions and
    :class:`~todeval.errors.UsageError` for unknown options.
    """
    chosen = parse_metrics(metrics)
    if active_domains not in ACTIVE_DOMAIN_MODES:
        raise choice_error("active-domains mode", str(active_domains), ACTIVE_DOMAIN_MODES)
    corpus = corpus if corpus is not None else CorpusData()
    if isinstance(predictions, str | Path):
        source = str(predictions)
        raw = read_prediction_file(predictions)
    else:
        source = "<predictions>"
        raw = predictions
    known = {d: len(turns) for d, turns in corpus.booked_domains.items()}
    parsed = validate_predictions(raw, source, known)
    return _score(parsed, chosen, active_domains, corpus, database, source)


def _states(
    parsed: Predictions, corpus: CorpusData
) -> tuple[dict[str, list[State]], bool]:
    """Normalised predicted states, or the gold states when any turn lacks one."""
    if all(t.state is not None for turns in parsed.values() for t in turns):
        return {
            d: [normalize_state(t.state or {}) for t in turns] for d, turns in parsed.items()
        }, False
    gold = corpus.gold_states
    return {d: gold[d][: len(turns)] for d, turns in parsed.items()}, True


def _score(
    parsed: Predictions,
    chosen: list[Metric],
    mode: ActiveDomainsMode,
    corpus: CorpusData,
    database: VenueDatabase | None,
    source: str,
) -> MultiwozResult:
    normalizer = ResponseNormalizer()
    responses = {d: [normalizer(t.response) for t in turns] for d, turns in parsed.items()}
    states, used_gold = _states(parsed, corpus)
    warnings: list[str] = []
    if used_gold:
        warnings.append(
            "some turns have no state: the gold MultiWOZ 2.2 states are used for every turn"
        )
    want_success = "inform" in chosen or "success" in chosen
    want_dst = "dst" in chosen and not used_gold
    if "dst" in chosen and used_gold:
        warnings.append("dst not scored: the predictions do not give a state for every turn")

    dialogues = [
        DialogueScore(dialogue_id=d, turns=len(turns)) for d, turns in parsed.items()
    ]
    estimated = 0
    if want_success:
        database = database if database is not None else VenueDatabase()
        goals, booked = corpus.goals, corpus.booked_domains
        for score in dialogues:
            d = score.dialogue_id
            turns: list[PredictedTurn] = parsed[d]
            domains, n_estimated = domains_per_turn(
                mode, [t.response for t in turns], states[d], [t.active_domains for t in turns]
            )
            estimated += n_estimated
            outcome = score_dialogue(goals[d], booked[d], responses[d], states[d], domains,
                                     database)  # fmt: skip
            score.domains = list(goals[d])
            score.inform = outcome.inform
            score.success = outcome.success
            score.inform_total = outcome.inform_total
            score.success_total = outcome.success_total
    if estimated:
        warnings.append(f"active domains estimated from state changes for {estimated} turns")

    bleu = None
    if "bleu" in chosen:
        bleu_stats = BleuStatistics()
        references = corpus.references
        for score in dialogues:
            refs = references[score.dialogue_id]
            turn_stats = [bleu_stats.turn(h, r) for h, r in zip(responses[score.dialogue_id], refs,
                                                                 strict=False)]  # fmt: skip
            score.bleu_stats = list(sum_stats(turn_stats))
        bleu = corpus_bleu(sum_stats([tuple(s.bleu_stats or ()) for s in dialogues]))

    richness_scores = None
    if "richness" in chosen:
        tokens = {d: [tokenize(r) for r in rs] for d, rs in responses.items()}
        for score in dialogues:
            score.lengths = [len(t) for t in tokens[score.dialogue_id]]
        r = richness(t for rs in tokens.values() for t in rs)
        richness_scores = RichnessScores(**r.__dict__)

    dst = None
    if want_dst:
        dst = _score_dst(dialogues, states, corpus)

    n = len(dialogues)
    inform = success = combined = None
    by_domain: dict[str, DomainRates] = {}
    if want_success:
        inform = _percent(sum(bool(s.inform_total) for s in dialogues), n)
        success = _percent(sum(bool(s.success_total) for s in dialogues), n)
        by_domain = _domain_rates(dialogues, chosen)
        if inform is not None and success is not None and bleu is not None:
            combined = 0.5 * (inform + success) + bleu
    return MultiwozResult(
        source=source,
        options=ScoringOptions(
            metrics=chosen,
            active_domains=mode,
            gold_states=used_gold,
            estimated_active_domain_turns=estimated,
        ),
        n_dialogues=n,
        n_turns=sum(s.turns for s in dialogues),
        inform=inform if "inform" in chosen else None,
        success=success if "success" in chosen else None,
        bleu=bleu,
        combined=combined if {"inform", "success", "bleu"} <= set(chosen) else None,
        by_domain=by_domain,
        richness=richness_scores,
        dst=dst,
        warnings=warnings,
        dialogues=dialogues,
    )


def _domain_rates(dialogues: list[DialogueScore], chosen: list[Metric]) -> dict[str, DomainRates]:
    counts: dict[str, list[int]] = {}
    for s in dialogues:
        for domain in s.domains:
            c = counts.setdefault(domain, [0, 0, 0])
            c[0] += 1
            c[1] += s.inform.get(domain, False)
            c[2] += s.success.get(domain, False) and bool(s.inform_total)
    return {
        domain: DomainRates(
            dialogues=c[0],
            inform=_percent(c[1], c[0]) if "inform" in chosen else None,
            success=_percent(c[2], c[0]) if "success" in chosen else None,
        )
        for domain, c in sorted(counts.items())
    }


def _score_dst(
    dialogues: list[DialogueScore], states: dict[str, list[State]], corpus: CorpusData
) -> DstScores:
    scorer = DstScorer()
    gold = corpus.gold_states
    joint = tp = fp = fn = turns = 0
    for score in dialogues:
        d = score.dialogue_id
        per_turn = [scorer.turn(p, g) for p, g in zip(states[d], gold[d], strict=False)]
        score.dst_joint = [t.joint for t in per_turn]
        counts = [sum(t.tp for t in per_turn), sum(t.fp for t in per_turn),
                  sum(t.fn for t in per_turn)]  # fmt: skip
        score.dst_counts = counts
        joint += sum(score.dst_joint)
        tp, fp, fn = tp + counts[0], fp + counts[1], fn + counts[2]
        turns += len(per_turn)
    precision = 100.0 * tp / (tp + fp) if tp + fp else 0.0
    recall = 100.0 * tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return DstScores(
        turns=turns,
        joint_accuracy=100.0 * joint / turns if turns else 0.0,
        slot_precision=precision,
        slot_recall=recall,
        slot_f1=f1,
    )
