"""Who failed: per-episode attribution to the agent under test or to the simulator (issue 30).

A benchmark with a simulated counterpart (a user simulator, a provider) declares a
:class:`Reviewer`: a function that reads one finished episode record -- never re-running it --
and lists the :class:`Fault` s it finds on each side, each with the turn and the text that show
it. This package knows no benchmark; it turns faults into a verdict per episode and a
:class:`ReviewSummary` per run:

* the **verdict** of a failed episode is ``agent``, ``simulator``, ``both`` or ``unclear`` (no
  fault found); a successful one is ``none`` (its faults are still listed: a simulator that gave
  the answer away spoils a success too);
* the **simulator fault rate**: the share of all episodes with at least one simulator fault,
  with a Wilson interval;
* **success where the simulator did not spoil the episode**: the success rate over the episodes
  with no simulator fault, with a Wilson interval. It is *conditional* -- it drops episodes by
  what happened in them -- so it is a diagnostic beside the headline, never a replacement.

A benchmark names its reviewer in its profile (``BenchmarkProfile.reviewer``, a
``"module:attr"`` reference); ``todeval review RUN_DIR...``, the report and panels find it from
each run's benchmark.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, EpisodeReview, Fault, Manifest, Side, Verdict
from todeval.stats.proportions import wilson_interval

VERDICTS: tuple[Verdict, ...] = ("agent", "simulator", "both", "unclear", "none")


class Review(BaseModel):
    """One episode's review (a line of ``todeval review -o FILE``)."""

    episode_id: str
    task_id: str
    outcome: str
    verdict: Verdict
    faults: list[Fault] = Field(default_factory=list)
    llm_verdict: Verdict | None = Field(
        None, description="the LLM reviewer's verdict (todeval review --review-model)"
    )
    llm_reason: str | None = None


def verdict_of(failed: bool, faults: Iterable[Fault]) -> Verdict:
    """The verdict of an episode: whose faults a failed episode has (``none`` if it did not
    fail)."""
    if not failed:
        return "none"
    sides = {fault.side for fault in faults}
    if sides == {"agent", "simulator"}:
        return "both"
    if sides == {"agent"}:
        return "agent"
    if sides == {"simulator"}:
        return "simulator"
    return "unclear"


def unique(faults: Iterable[Fault]) -> list[Fault]:
    """The faults without repeats of the same side, kind and turn (first kept)."""
    seen: set[tuple[str, str, int]] = set()
    out = []
    for fault in faults:
        key = (fault.side, fault.kind, fault.turn)
        if key not in seen:
            seen.add(key)
            out.append(fault)
    return out


def review_of(record: EpisodeRecord, faults: Iterable[Fault]) -> Review:
    """A :class:`Review` of ``record`` with ``faults`` (deduplicated) and their verdict."""
    found = unique(faults)
    failed = record.outcome is not Outcome.SUCCESS
    return Review(
        episode_id=record.episode_id,
        task_id=record.task_id,
        outcome=record.outcome.value,
        verdict=verdict_of(failed, found),
        faults=found,
    )


ReviewFunction = Callable[[Manifest, Iterable[EpisodeRecord]], Iterator[Review]]
BriefFunction = Callable[[Manifest, Sequence[EpisodeRecord]], dict[str, str]]


@dataclass(frozen=True)
class Reviewer:
    """A benchmark's reviewer: what its two sides are called and how one run is reviewed.

    ``review(manifest, records)`` yields one :class:`Review` per record; it raises
    :class:`~todeval.errors.BadInputError` for a run it cannot read (a task not shipped)."""

    benchmark: str
    agent: str
    simulator: str
    review: ReviewFunction
    notes: tuple[str, ...] = ()
    briefs: BriefFunction | None = None
    """For the LLM reviewer: per episode id, what the simulator was given and what the agent
    had to achieve (privileged: the reviewer is no player)."""
    simulator_role: str | None = None
    """The run role the simulator plays (a panel varying it shows each member's fault rate)."""

    def side_name(self, side: str) -> str:
        return {"agent": self.agent, "simulator": self.simulator}.get(side, side)


class Share(BaseModel):
    """``k`` of ``n`` with a 95% Wilson interval."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, k: int, n: int) -> Share:
        if n == 0:
            return cls(k=k, n=n, value=None, low=None, high=None)
        low, high = wilson_interval(k, n)
        return cls(k=k, n=n, value=k / n, low=low, high=high)

    def text(self) -> str:
        if self.value is None:
            return f"{self.k}/{self.n}  -"
        return f"{self.k}/{self.n}  {self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


class FaultCount(BaseModel):
    side: Side
    kind: str
    episodes: int
    failed: int


class LLMReviewSummary(BaseModel):
    """The LLM reviewer's verdicts of the failed episodes, against the rules'."""

    model: str
    reviewed: int
    failures: int = Field(description="answers without a valid verdict")
    verdicts: dict[str, Share]
    agreement: Share = Field(description="failed episodes where the LLM and the rules agree")
    kappa: float | None = Field(description="Cohen's kappa, LLM vs rules, over the verdicts")
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class ReviewSummary(BaseModel):
    """One run's reviews, counted."""

    benchmark: str
    agent: str
    simulator: str
    episodes: int
    failed: int
    verdicts: dict[str, Share]
    faults: list[FaultCount]
    success: Share
    simulator_fault_rate: Share
    success_unspoiled: Share = Field(
        description="conditional: success over the episodes with no simulator fault"
    )
    llm: LLMReviewSummary | None = None


def llm_summary(
    reviews: Sequence[Review], model: str, failures: int, usage: Sequence[Any]
) -> LLMReviewSummary:
    """The LLM verdicts of the failed ``reviews`` and their agreement with the rule verdicts."""
    from todeval.annotation.agreement import cohen_kappa

    failed = [r for r in reviews if r.verdict != "none"]
    both = [r for r in failed if r.llm_verdict is not None]
    counts = Counter(r.llm_verdict for r in both)
    kappa = None
    if both and len({r.verdict for r in both} | {r.llm_verdict for r in both}) > 1:
        value = cohen_kappa([r.verdict for r in both], [r.llm_verdict for r in both])
        kappa = None if value != value else value  # NaN: one class on both sides
    return LLMReviewSummary(
        model=model,
        reviewed=len(both),
        failures=failures,
        verdicts={v: Share.of(counts[v], len(both)) for v in VERDICTS[:-1]},
        agreement=Share.of(sum(r.verdict == r.llm_verdict for r in both), len(both)),
        kappa=kappa,
        calls=len(usage),
        prompt_tokens=sum(int(getattr(c, "prompt_tokens", 0) or 0) for c in usage),
        completion_tokens=sum(int(getattr(c, "completion_tokens", 0) or 0) for c in usage),
        cost_usd=sum(float(getattr(c, "cost_usd", 0.0) or 0.0) for c in usage),
    )


Tally = Counter[tuple[Verdict, frozenset[tuple[Side, str]]]]
"""Episodes counted by verdict and the (side, kind) of their faults: all :func:`summarise`
reads of a run's reviews, small however many episodes it has."""


def tally(reviews: Iterable[Review]) -> Tally:
    """``reviews`` counted by verdict and fault kinds (see :data:`Tally`)."""
    return Counter((r.verdict, frozenset((f.side, f.kind) for f in r.faults)) for r in reviews)


def summarise(reviewer: Reviewer, reviews: Sequence[Review] | Tally) -> ReviewSummary:
    """Verdict shares of the failed episodes, fault counts, and the simulator's share (of
    ``reviews``, or of their :func:`tally`)."""
    counts = reviews if isinstance(reviews, Counter) else tally(reviews)
    episodes = sum(counts.values())
    verdicts: Counter[str] = Counter()
    per_kind: Counter[tuple[str, str]] = Counter()
    per_kind_failed: Counter[tuple[str, str]] = Counter()
    spoiled = clean = clean_success = 0
    for (verdict, kinds), n in counts.items():
        for kind in kinds:
            per_kind[kind] += n
        if verdict != "none":
            verdicts[verdict] += n
            for kind in kinds:
                per_kind_failed[kind] += n
        if any(side == "simulator" for side, _ in kinds):
            spoiled += n
        else:
            clean += n
            clean_success += n if verdict == "none" else 0
    failed = sum(verdicts.values())
    return ReviewSummary(
        benchmark=reviewer.benchmark,
        agent=reviewer.agent,
        simulator=reviewer.simulator,
        episodes=episodes,
        failed=failed,
        verdicts={v: Share.of(verdicts[v], failed) for v in VERDICTS[:-1]},
        faults=[
            FaultCount(side=side, kind=kind, episodes=n, failed=per_kind_failed[(side, kind)])
            for (side, kind), n in sorted(per_kind.items())
        ],
        success=Share.of(episodes - failed, episodes),
        simulator_fault_rate=Share.of(spoiled, episodes),
        success_unspoiled=Share.of(clean_success, clean),
    )


__all__ = [
    "VERDICTS",
    "EpisodeReview",
    "Fault",
    "FaultCount",
    "LLMReviewSummary",
    "Review",
    "ReviewFunction",
    "ReviewSummary",
    "Reviewer",
    "Share",
    "Side",
    "Tally",
    "Verdict",
    "llm_summary",
    "review_of",
    "summarise",
    "tally",
    "unique",
    "verdict_of",
]
