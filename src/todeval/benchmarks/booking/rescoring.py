"""A stored booking episode scored again (``todeval rescore``), from its events alone.

The episode's world is rebuilt (the task's database under the run's protocol, the game
master's stream from the run's seed) and every recorded booking request is played against it
again in order, as the game master played it: the bookings (``strict``: the booked rows) and
the generated slots (``clemtodd``: the successful calls' merged arguments) follow from the
events, not from the record's details. The scores, the outcome (a dialogue that ended with
``done`` but booked wrongly is a failure), the counts and the failure class are then computed
as :meth:`~todeval.benchmarks.booking.game.GameMaster._record` computes them.
"""

from __future__ import annotations

from typing import Any

from todeval.benchmarks.booking.game import GameRules, episode_environment
from todeval.benchmarks.booking.rules import get_protocol
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.taxonomy import classify, unrealistic_class
from todeval.benchmarks.booking.users.ending import GAVE_UP
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.dialogue.episode import EpisodeStreams, Termination
from todeval.spec import Rescored, RunContext

SCORER_VERSION = "2"
"""The booking scorer's version: bump it with any change to the scores, the outcome rule, the
counts or the failure classes a stored episode gets (``tests/rescore`` holds golden episodes)."""


def _dialogue_end(record: EpisodeRecord) -> tuple[str, str]:
    """(outcome, reason) of the dialogue itself, before scoring overrode them."""
    for event in reversed(record.events):
        if event.kind == "episode_end":
            said = event.data
            outcome = said.get("dialogue_outcome", said.get("outcome"))
            reason = said.get("dialogue_reason", said.get("reason"))
            return str(outcome), str(reason or "")
    return record.outcome.value, record.reason


def _gave_up(reason: str) -> bool:
    """The record's reason names a user that gave up (the game master appends its end)."""
    return any(reason.endswith(f"({end})") for end in GAVE_UP)


def rescore(
    run: RunContext[Any, BookingTask], task: BookingTask, record: EpisodeRecord
) -> Rescored:
    """The booking scorer over a stored episode (see the module)."""
    rules: GameRules = run.shared
    protocol = get_protocol(rules.protocol, task.task_set)
    streams = EpisodeStreams(run.config.seed, task.task_id, record.trial)
    env = episode_environment(task, streams, rules.protocol)
    for event in record.events:
        if event.kind == "user_message":
            protocol.user_turn()
        if event.kind == "booking_request":
            domain = str(event.data.get("domain", ""))
            slots = event.data.get("arguments")
            goal = task.domains.get(domain)
            keys = list(goal.book) if goal is not None else []
            protocol.book(env, domain, dict(slots) if isinstance(slots, dict) else {}, keys)
    termination = Termination(record.termination or Termination.DONE.value)
    dialogue_outcome, _ = _dialogue_end(record)
    completed = termination is Termination.DONE and dialogue_outcome == Outcome.SUCCESS.value
    score = protocol.score(task, env, completed and not _gave_up(record.reason))
    outcome = Outcome(dialogue_outcome)
    if outcome is Outcome.SUCCESS and score.booking_accuracy < 1.0:
        outcome = Outcome.FAILURE
    turns = record.turns
    violations = [
        {"turn": e.turn, "reason": e.data.get("reason"), "raw": e.data.get("raw")}
        for e in record.events
        if e.kind == "violation"
    ]

    def count(*kinds: str) -> int:
        return sum(1 for e in record.events if e.kind in kinds)

    metrics = {
        "booking.inform": score.inform,
        "booking.booking_accuracy": score.booking_accuracy,
        "booking.aborted": float(outcome is Outcome.ABORTED),
        "booking.turn_cap": float(termination is Termination.TURN_CAP),
        "booking.format_violations": float(len(violations)),
        "booking.violations_per_turn": len(violations) / max(turns, 1),
        "booking.turns": float(turns),
        "booking.system_calls": float(
            count("system_message", "db_query", "booking_request", "violation")
        ),
        "booking.db_queries": float(count("db_query")),
        "booking.booking_attempts": float(count("booking_request")),
    }
    if score.attributes is not None:
        metrics["booking.attributes"] = score.attributes
    failure_class = classify(outcome, termination, completed, env.bookings, task, violations)
    labels = {"failure_class": failure_class}
    if task.task_set == "unrealistic":
        labels["unrealistic"] = unrealistic_class(task, failure_class, record.events)
    return Rescored(
        metrics=metrics,
        labels=labels,
        outcome=outcome,
        details={
            "bookings": {d: b.model_dump() for d, b in env.bookings.items()},
            **protocol.scored_details(env),
            "domain_scores": {d: s.model_dump() for d, s in score.domains.items()},
        },
    )
