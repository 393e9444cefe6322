"""Inform/Success and DST of validated predictions, and the :class:`MultiwozResult` of a pass
(the text metrics come from :func:`~todeval.scoring.multiwoz._text.text_scores`, usually
computed meanwhile by a forked child). Imported after that child is started: the result
models' pydantic import and the validation run beside it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from todeval.scoring.multiwoz._background import BackgroundCall
from todeval.scoring.multiwoz._corpus import CorpusData
from todeval.scoring.multiwoz._database import VenueDatabase
from todeval.scoring.multiwoz._domains import ActiveDomainsMode
from todeval.scoring.multiwoz._domains import active_domains as domains_per_turn
from todeval.scoring.multiwoz._dst import DstScorer
from todeval.scoring.multiwoz._models import (
    DialogueScore,
    DomainRates,
    DstScores,
    Metric,
    MultiwozResult,
    RichnessScores,
    ScoringOptions,
)
from todeval.scoring.multiwoz._normalize import State, canonicalize_placeholders, normalize_state
from todeval.scoring.multiwoz._success import score_dialogue
from todeval.scoring.multiwoz._text import TextScores

if TYPE_CHECKING:
    from todeval.scoring.multiwoz._io import Predictions


def _percent(hits: int, total: int) -> float | None:
    return 100.0 * hits / total if total else None


class Scorer:
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
        self,
        source: str,
        text_job: BackgroundCall[TextScores],
        while_waiting: Callable[[], object] | None,
    ) -> MultiwozResult:
        """Score Inform/Success (and DST) here while ``text_job`` computes the text metrics."""
        canonical: dict[str, str] = {}
        for turns in self.parsed.values():
            for turn in turns:
                if turn.response not in canonical:
                    canonical[turn.response] = canonicalize_placeholders(turn.response)
        states: dict[str, list[State]] = {}
        used_gold = False
        if self._wants_success or "dst" in self.chosen:
            states, used_gold = self._states()
        estimated = self._inform_success(states, canonical) if self._wants_success else 0
        if while_waiting is not None:
            while_waiting()
        text = text_job.result()
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
        _, missing_dialogues, missing_turns = self._missing()
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
            missing_dialogues=missing_dialogues,
            missing_turns=missing_turns,
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
