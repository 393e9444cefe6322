"""A stored ClarQ episode scored again (``todeval rescore``), from its events alone.

The transcript is the episode's ``provider_message`` and ``seeker_message`` events, the release
record its provider decisions' ``released`` labels (:mod:`~todeval.benchmarks.clarq.rundir`
reads the same); the exact scorer then runs as the episode ran it, with no model call: the
judge answers from the shipped verdicts and the ones the episode recorded, and (a run without
a judge model) the release record decides the rest.
"""

from __future__ import annotations

import asyncio
from typing import Any

from todeval.benchmarks.clarq._judge import Judge, VerdictStore, recorded_verdicts
from todeval.benchmarks.clarq._scoring import score_episode
from todeval.benchmarks.clarq._tasks import ClarqTask
from todeval.benchmarks.clarq.game import episode_metrics, transcript
from todeval.benchmarks.clarq.rundir import SCORED as SCORED_TERMINATIONS
from todeval.benchmarks.clarq.rundir import episode_messages, episode_verdicts
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.spec import Rescored, RunContext

SCORER_VERSION = "1"
"""The ClarQ scorer's version: bump it with any change to S, AQD, AQL, the released share,
the economy, the route or the outcome a stored episode gets (``tests/rescore`` holds golden
episodes)."""

END = "clarq.end"
ROUTE = "clarq.route"


def released_labels(record: EpisodeRecord) -> list[str]:
    """The labels the provider released, in order, from its decision events (older records:
    ``details['released']``)."""
    decisions = [e for e in record.events if e.kind == "provider_decision"]
    if not decisions:
        return [str(label) for label in record.details.get("released", [])]
    return [str(label) for e in decisions for label in e.data.get("released", [])]


def rescore(run: RunContext[Any, ClarqTask], task: ClarqTask, record: EpisodeRecord) -> Rescored:
    """The ClarQ scorer over a stored episode (see the module)."""
    shared = run.shared  # the run's ClarqRun (its judge's name and whether the release rules)
    released = released_labels(record)
    scored = record.termination in SCORED_TERMINATIONS
    messages = episode_messages(record) if scored else None
    dialogue = transcript(task, messages, released, trial=record.trial)
    store = VerdictStore(layers=[recorded_verdicts(), episode_verdicts([record])])
    judge = Judge(store, model=shared.judge_name, seed=run.config.seed)
    score = asyncio.run(score_episode(dialogue, judge, release_rule=shared.release_rule))
    outcome = None
    if scored:
        outcome = Outcome.SUCCESS if score.success else Outcome.FAILURE
    verdict = {True: "success", False: "failure", None: "unjudged"}[score.success]
    said = record.reason.rsplit("; released ", 1)[0]
    reason = f"{said}; released {len(released)} of {len(task.nodes)}; {verdict} ({score.route})"
    labels: dict[str, str] = {ROUTE: score.route}
    if END in record.labels:  # how the dialogue ended: the game master's, not the scorer's
        labels[END] = record.labels[END]
    before = [step.get("origin") for step in record.details.get("judge", [])]
    return Rescored(
        metrics=episode_metrics(task, score, len(released)),
        labels=labels,
        outcome=outcome,
        reason=reason,
        details={
            "released": released,
            "judge": [
                {
                    "gold": s.gold,
                    "origin": _origin(s.answer.origin, before, i),
                    "match": s.answer.match,
                }
                for i, s in enumerate(score.judge_steps)
            ],
        },
    )


def _origin(now: str, before: list[Any], i: int) -> str:
    """A step's origin: a verdict the episode obtained from its judge model is read back from
    the record (``cache``) but stays ``judge``, as the episode wrote it."""
    if now == "cache" and i < len(before) and before[i] == "judge":
        return "judge"
    return now
