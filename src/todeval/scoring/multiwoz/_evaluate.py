"""``evaluate``: score a MultiWOZ prediction file or mapping with the standard rules.

Order of work (so that the text metrics can run in a child process meanwhile): placeholders
are canonicalised first; Inform/Success only look for canonical placeholder words (``NAME``,
``PHONE``, ...), which the Moses round trip never creates or removes, so they are scored on the
canonicalised text by the parent while the child normalises the texts and computes BLEU and
richness from the fully normalised text (:func:`text_scores`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from todeval.errors import UsageError, choice_error
from todeval.scoring.multiwoz._background import BackgroundCall
from todeval.scoring.multiwoz._bleu import N_STATS, corpus_bleu, tokenize_13a, turn_statistics
from todeval.scoring.multiwoz._corpus import CorpusData
from todeval.scoring.multiwoz._database import VenueDatabase
from todeval.scoring.multiwoz._domains import ACTIVE_DOMAIN_MODES, ActiveDomainsMode
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
    RichnessScores,
    ScoringOptions,
)
from todeval.scoring.multiwoz._normalize import (
    State,
    canonicalize_placeholders,
    moses_round_trip,
    normalize_state,
)
from todeval.scoring.multiwoz._richness import Richness, richness, tokenize
from todeval.scoring.multiwoz._success import score_dialogue

DEFAULT_METRICS: tuple[Metric, ...] = METRICS


def _percent(hits: int, total: int) -> float | None:
    return 100.0 * hits / total if total else None


@dataclass(frozen=True)
class TextScores:
    """What the text metrics give: corpus BLEU and per-dialogue BLEU statistics, per-turn
    token counts and the richness figures (each only when asked for)."""

    bleu: float | None
    bleu_stats: list[list[int]]
    lengths: list[list[int]]
    richness: Richness | None


def text_scores(
    texts: Sequence[str],
    turn_texts: Sequence[Sequence[int]],
    references: Callable[[], list[list[str]]],
    *,
    bleu: bool,
    lexical: bool,
) -> TextScores:
    """Moses-normalise ``texts`` (canonicalised responses) and score BLEU and richness.

    ``turn_texts`` gives, per dialogue, the index in ``texts`` of each turn's response;
    ``references`` returns, per dialogue, its 13a-tokenised references (called only for BLEU).
    """
    if not bleu and not lexical:
        return TextScores(bleu=None, bleu_stats=[], lengths=[], richness=None)
    round_trip = moses_round_trip()
    normalized = [round_trip(t) for t in texts]
    corpus = None
    per_dialogue: list[list[int]] = []
    if bleu:
        import numpy as np

        hyp_tokens = [tokenize_13a(t.rstrip()).split() for t in normalized]
        hyps: list[list[str]] = []
        refs: list[list[str]] = []
        bounds = [0]
        for indexes, dialogue_refs in zip(turn_texts, references(), strict=True):
            for i, ref in zip(indexes, dialogue_refs, strict=False):
                hyps.append(hyp_tokens[i])
                refs.append(ref.split())
            bounds.append(len(hyps))
        per_turn = turn_statistics(hyps, refs)
        cumulative = np.vstack([np.zeros((1, N_STATS), dtype=np.int64), per_turn.cumsum(axis=0)])
        sums = cumulative[bounds[1:]] - cumulative[bounds[:-1]]
        per_dialogue = [[int(v) for v in row] for row in sums]
        corpus = corpus_bleu(tuple(int(v) for v in per_turn.sum(axis=0)))
    lengths: list[list[int]] = []
    scores = None
    if lexical:
        tokens = [tokenize(t) for t in normalized]
        lengths = [[len(tokens[i]) for i in indexes] for indexes in turn_texts]
        scores = richness(tokens[i] for indexes in turn_texts for i in indexes)
    return TextScores(bleu=corpus, bleu_stats=per_dialogue, lengths=lengths, richness=scores)


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
    parallel: bool = False,
    while_waiting: Callable[[], object] | None = None,
) -> MultiwozResult:
    """Score predictions in the community format against the MultiWOZ test set.

    ``predictions`` is a path to a ``.json``/``.json.gz`` file or the parsed mapping
    ``{dialogue_id: [{"response", "state"?, "active_domains"?}, ...]}``. Missing dialogues
    and turns are fine (only given turns count); if any turn lacks a state, the gold
    MultiWOZ 2.2 states are used for every turn. ``active_domains`` chooses where the active
    domains come from (``given``, ``state`` or ``placeholders``). Pass a shared
    ``corpus``/``database`` to reuse loaded data across calls. ``parallel=True`` runs the Moses
    normalisation in a forked child process (POSIX; same results, less wall time).
    ``while_waiting`` is called once after Inform/Success, before the text metrics are
    collected (with ``parallel``, while the child may still be working): a caller can prepare
    what it does next there, e.g. import its modules.

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
    scorer = _Scorer(parsed, chosen, active_domains, corpus, database)
    return scorer.run(source, parallel=parallel, while_waiting=while_waiting)


class _Scorer:
    """One scoring pass over validated predictions."""

    def __init__(
        self,
        parsed: Predictions,
        chosen: list[Metric],
        mode: ActiveDomainsMode,
        corpus: CorpusData,
        database: VenueDatabase | None,
    ) -> None:
        self.parsed = parsed
        self.chosen = chosen
        self.mode = mode
        self.corpus = corpus
        self.database = database
        self.warnings: list[str] = []
        self.dialogues = [DialogueScore(dialogue_id=d, turns=len(t)) for d, t in parsed.items()]

    def run(
        self, source: str, *, parallel: bool, while_waiting: Callable[[], object] | None
    ) -> MultiwozResult:
        canonical: dict[str, str] = {}
        for turns in self.parsed.values():
            for turn in turns:
                if turn.response not in canonical:
                    canonical[turn.response] = canonicalize_placeholders(turn.response)
        unique = list(dict.fromkeys(canonical.values()))
        index = {text: i for i, text in enumerate(unique)}
        turn_texts = [
            [index[canonical[t.response]] for t in turns] for turns in self.parsed.values()
        ]
        ids = list(self.parsed)
        corpus = self.corpus
        text_in_child = parallel and ("bleu" in self.chosen or "richness" in self.chosen)
        if text_in_child and "bleu" in self.chosen:
            # BLEU counts with numpy and a caller's summary needs it too: imported once, here,
            # the forked child inherits it instead of importing it again
            import numpy  # noqa: F401
        job = BackgroundCall(
            lambda: text_scores(
                unique,
                turn_texts,
                lambda: [corpus.tokenized_references[d] for d in ids],
                bleu="bleu" in self.chosen,
                lexical="richness" in self.chosen,
            ),
            parallel=text_in_child,
        )
        try:
            states: dict[str, list[State]] = {}
            used_gold = False
            if self._wants_success or "dst" in self.chosen:
                states, used_gold = self._states()
            estimated = self._inform_success(states, canonical) if self._wants_success else 0
            if while_waiting is not None:
                while_waiting()
            text = job.result()
        finally:
            job.close()
        for score, bleu_stats in zip(self.dialogues, text.bleu_stats, strict=False):
            score.bleu_stats = bleu_stats
        for score, lengths in zip(self.dialogues, text.lengths, strict=False):
            score.lengths = lengths
        bleu = text.bleu
        richness_scores = (
            RichnessScores(**text.richness.__dict__) if text.richness is not None else None
        )
        dst = None
        if "dst" in self.chosen:
            if used_gold:
                self.warnings.append(
                    "dst not scored: the predictions do not give a state for every turn"
                )
            else:
                dst = self._dst(states)
        if estimated:
            self.warnings.append(
                "active domains estimated from state changes for "
                f"{estimated} of {sum(t.turns for t in self.dialogues)} turns"
            )
        self._coverage_warnings()
        return self._result(source, used_gold, estimated, bleu, richness_scores, dst)

    def _missing(self) -> tuple[int, int, int]:
        """(test dialogues, missing dialogues, missing trailing turns of given dialogues)."""
        booked = self.corpus.booked_domains
        missing_turns = sum(len(booked[s.dialogue_id]) - s.turns for s in self.dialogues)
        return len(booked), len(booked) - len(self.dialogues), missing_turns

    def _coverage_warnings(self) -> None:
        total, missing, missing_turns = self._missing()
        n = len(self.dialogues)
        if missing:
            given = {s.dialogue_id for s in self.dialogues}
            absent = sorted(d for d in self.corpus.booked_domains if d not in given)
            named = f" ({', '.join(absent)})" if len(absent) <= 5 else ""
            self.warnings.append(
                f"{missing} of {total} test dialogues are missing from the predictions{named} "
                f"and are not scored: every figure is over the {n} given dialogues (as the "
                "standard evaluator does), not comparable with a full test-set score as it is"
            )
        if missing_turns:
            self.warnings.append(
                f"{missing_turns} system turns are missing at the end of given dialogues: "
                "only the given turns count"
            )

    @property
    def _wants_success(self) -> bool:
        return "inform" in self.chosen or "success" in self.chosen

    def _states(self) -> tuple[dict[str, list[State]], bool]:
        """Normalised predicted states, or the gold states when any turn lacks one."""
        parsed = self.parsed
        if all(t.state is not None for turns in parsed.values() for t in turns):
            memo: dict[tuple[str, str], tuple[str, str]] = {}
            normalized = {
                d: [normalize_state(t.state or {}, memo) for t in turns]
                for d, turns in parsed.items()
            }
            return normalized, False
        self.warnings.append(
            "some turns have no state: the gold MultiWOZ 2.2 states are used for every turn"
        )
        gold = self.corpus.gold_states
        return {d: gold[d][: len(turns)] for d, turns in parsed.items()}, True

    def _inform_success(self, states: dict[str, list[State]], canonical: dict[str, str]) -> int:
        database = self.database if self.database is not None else VenueDatabase()
        goals, booked = self.corpus.goals, self.corpus.booked_domains
        estimated = 0
        for score in self.dialogues:
            d = score.dialogue_id
            turns = self.parsed[d]
            raw = [t.response for t in turns]
            domains, n_estimated = domains_per_turn(
                self.mode, raw, states[d], [t.active_domains for t in turns]
            )
            estimated += n_estimated
            texts = [canonical[r] for r in raw]
            outcome = score_dialogue(goals[d], booked[d], texts, states[d], domains, database)
            score.domains = list(goals[d])
            score.inform = outcome.inform
            score.success = outcome.success
            score.inform_total = outcome.inform_total
            score.success_total = outcome.success_total
        return estimated

    def _dst(self, states: dict[str, list[State]]) -> DstScores:
        scorer = DstScorer()
        gold = self.corpus.gold_states
        joint = tp = fp = fn = turns = 0
        for score in self.dialogues:
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

    def _domain_rates(self) -> dict[str, DomainRates]:
        counts: dict[str, list[int]] = {}
        for s in self.dialogues:
            for domain in s.domains:
                c = counts.setdefault(domain, [0, 0, 0])
                c[0] += 1
                c[1] += s.inform.get(domain, False)
                c[2] += s.success.get(domain, False)
        return {
            domain: DomainRates(
                dialogues=c[0],
                inform=_percent(c[1], c[0]) if "inform" in self.chosen else None,
                success=_percent(c[2], c[0]) if "success" in self.chosen else None,
            )
            for domain, c in sorted(counts.items())
        }

    def _result(
        self,
        source: str,
        used_gold: bool,
        estimated: int,
        bleu: float | None,
        richness_scores: RichnessScores | None,
        dst: DstScores | None,
    ) -> MultiwozResult:
        dialogues = self.dialogues
        n = len(dialogues)
        inform = success = combined = None
        by_domain: dict[str, DomainRates] = {}
        if self._wants_success:
            inform = _percent(sum(bool(s.inform_total) for s in dialogues), n)
            success = _percent(sum(bool(s.success_total) for s in dialogues), n)
            by_domain = self._domain_rates()
        chosen = set(self.chosen)
        if {"inform", "success", "bleu"} <= chosen and None not in (inform, success, bleu):
            combined = 0.5 * ((inform or 0.0) + (success or 0.0)) + (bleu or 0.0)
        return MultiwozResult(
            source=source,
            options=ScoringOptions(
                metrics=self.chosen,
                active_domains=self.mode,
                gold_states=used_gold,
                estimated_active_domain_turns=estimated,
            ),
            n_dialogues=n,
            n_turns=sum(s.turns for s in dialogues),
            missing_dialogues=self._missing()[1],
            missing_turns=self._missing()[2],
            inform=inform if "inform" in chosen else None,
            success=success if "success" in chosen else None,
            bleu=bleu,
            combined=combined,
            by_domain=by_domain,
            richness=richness_scores,
            dst=dst,
            warnings=self.warnings,
            dialogues=dialogues,
        )
