"""Helpers every episode loop uses: the log, guarded participant calls, the typed end of an
episode, per-stream RNGs and the record.

A benchmark's game master keeps only its rules; the bookkeeping is here (a whole episode, runnable
as it stands; ``tests/core/test_dialogue.py`` runs it)::

    import asyncio

    from todeval.core.outcome import Outcome
    from todeval.dialogue import EpisodeEnd, EpisodeLog, EpisodeStreams, Termination, guarded


    class Echo:  # a user simulator that repeats what it was told
        async def respond(self, message: str) -> str:
            return message


    async def play(user: Echo, run_seed: int, task_id: str, trial: int) -> object:
        streams = EpisodeStreams(run_seed, task_id, trial)
        log = EpisodeLog()
        try:
            log.turn += 1
            text = await guarded(user.respond("done"), "user", Termination.SIMULATOR_ERROR)
            log.message("user", text)
            raise EpisodeEnd(Outcome.SUCCESS, Termination.DONE, f"user said {text}")
        except EpisodeEnd as exc:
            end = exc
        return log.record(benchmark="demo", streams=streams, end=end, metrics={"demo.ok": 1.0})


    record = asyncio.run(play(Echo(), 0, "task-1", 0))
    assert record.outcome is Outcome.SUCCESS and record.reason == "user said done"

The rule for crashes (:func:`guarded`): our own model backends failing after every retry
(:class:`~todeval.errors.InfrastructureError`) is infrastructure -- excluded from metrics and
re-run on resume; any other exception is the participant's own failure, with the termination
the caller names: :attr:`Termination.SYSTEM_ERROR` for the agent under test (a failure in every
metric, never re-run), :attr:`Termination.SIMULATOR_ERROR` for a simulator.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Self, SupportsIndex, TypeVar

from todeval.core.clock import utc_now
from todeval.core.events import MODEL_CALL, EventType, type_of_kind
from todeval.core.outcome import Outcome
from todeval.core.records import (
    CallUsage,
    EpisodeRecord,
    Event,
    ModelCall,
    Timing,
    episode_id,
    sum_usage,
)
from todeval.core.rng import derive_seed, episode_rng
from todeval.errors import InfrastructureError

T = TypeVar("T")


class Termination(StrEnum):
    """Why an episode stopped, as a type (the record's ``reason`` says it in words)."""

    DONE = "done"  # a participant ended the dialogue by the protocol's rule
    TURN_CAP = "turn_cap"
    INNER_LOOP_CAP = "inner_loop_cap"
    FORMAT_VIOLATION = "format_violation"
    SIMULATOR_ERROR = "simulator_error"
    SYSTEM_ERROR = "system_error"
    INFRASTRUCTURE = "infrastructure"


_CRASH_OUTCOME = {
    Termination.SIMULATOR_ERROR: Outcome.USER_SIMULATOR_ERROR,
    Termination.SYSTEM_ERROR: Outcome.SYSTEM_ERROR,
}


class EpisodeEnd(Exception):
    """The end of an episode: raise it from anywhere in the loop, or return it."""

    def __init__(
        self, outcome: Outcome, termination: Termination, reason: str, *, completed: bool = False
    ) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.termination = termination
        self.reason = reason
        self.completed = completed

    @classmethod
    def success(cls, reason: str) -> EpisodeEnd:
        """The task was done (by the protocol's rule)."""
        return cls(Outcome.SUCCESS, Termination.DONE, reason)

    @classmethod
    def failure(cls, reason: str, termination: Termination = Termination.DONE) -> EpisodeEnd:
        """The episode ended without the task done (``termination``: why it stopped)."""
        return cls(Outcome.FAILURE, termination, reason)

    @property
    def succeeded(self) -> bool:
        return self.outcome is Outcome.SUCCESS


async def guarded(call: Awaitable[T], who: str, crash: Termination = Termination.SYSTEM_ERROR) -> T:
    """Await a participant's call; a failure ends the episode (see the module's rule).

    ``crash`` is :attr:`Termination.SYSTEM_ERROR` (the agent under test, the default) or
    :attr:`Termination.SIMULATOR_ERROR` (a simulated participant). An
    :class:`~todeval.errors.InfrastructureError` from one of our layers (its ``origin`` set)
    ends the episode as an infrastructure error, re-run on resume; the agent under test raising
    one itself is its own crash, so it cannot buy a re-run (a fresh draw) of a task it dislikes.
    """
    try:
        return await call
    except InfrastructureError as exc:
        if not exc.origin and crash is Termination.SYSTEM_ERROR:
            # raised by the agent's own code, not by a layer of ours: its failure, not a re-run
            raise EpisodeEnd(
                _CRASH_OUTCOME[crash], crash, f"{who} raised {type(exc).__name__}: {exc}"
            ) from exc
        raise EpisodeEnd(
            Outcome.INFRASTRUCTURE_ERROR, Termination.INFRASTRUCTURE, f"{who} model: {exc}"
        ) from exc
    except Exception as exc:
        raise EpisodeEnd(
            _CRASH_OUTCOME[crash], crash, f"{who} raised {type(exc).__name__}: {exc}"
        ) from exc


@dataclass(frozen=True)
class EpisodeStreams:
    """The episode's seed and its independent named random streams (one per participant)."""

    run_seed: int
    task_id: str
    trial: int = 0

    @property
    def seed(self) -> int:
        return derive_seed(self.run_seed, self.task_id, self.trial)

    def seed_of(self, stream: str) -> int:
        return derive_seed(self.run_seed, self.task_id, self.trial, stream)

    def rng(self, stream: str) -> random.Random:
        return episode_rng(self.run_seed, self.task_id, self.trial, stream)


class CallLog(list[CallUsage]):
    """An episode's model-call accounting: a plain list of :class:`CallUsage` to everyone who
    appends to it, except that a call made with its text (a :class:`ModelCall`, what
    :func:`todeval.backends.sampling.generate_accounted` appends) is also recorded as a
    ``model_call`` event of the log at that moment (so under the turn it was made in)."""

    def __init__(self, log: EpisodeLog) -> None:
        super().__init__()
        self._log = log

    def append(self, call: CallUsage) -> None:
        super().append(call)
        if isinstance(call, ModelCall):  # a validated ModelCall's data fits the payload as it is
            self._log.add_checked(MODEL_CALL, call.role, "model_call", call.event_data())

    def extend(self, calls: Iterable[CallUsage]) -> None:
        for call in calls:
            self.append(call)

    def __iadd__(self, calls: Iterable[CallUsage]) -> Self:  # type: ignore[override,misc]
        self.extend(calls)
        return self

    def insert(self, index: SupportsIndex, call: CallUsage) -> None:
        raise TypeError("an episode's calls are appended in the order they were made")


@dataclass
class EpisodeLog:
    """Events, call accounting and violations of one episode, and its clock.

    Events are typed (:mod:`todeval.core.events`): :meth:`message`, :meth:`tool_call`,
    :meth:`tool_result`, :meth:`violation` and :meth:`finish` write the built-in types, model
    calls appended to :attr:`usage` are recorded by themselves, and :meth:`add` writes an event
    whose type follows from its kind (``*_message`` a message, anything else a benchmark's
    extra).
    """

    t0: float = field(default_factory=time.monotonic)
    started_at: str = field(default_factory=utc_now)
    events: list[Event] = field(default_factory=list)
    usage: CallLog = field(init=False)
    violations: list[dict[str, Any]] = field(default_factory=list)
    turn: int = 0

    def __post_init__(self) -> None:
        self.usage = CallLog(self)

    def add_typed(self, kind: str, actor: str, type: EventType, data: dict[str, Any]) -> None:
        """Append an event of ``type`` (its ``data`` is checked against the type)."""
        self.events.append(
            Event(
                t=round(time.monotonic() - self.t0, 6),
                kind=kind,
                type=type,
                actor=actor,
                turn=self.turn,
                data=data,
            )
        )

    def add_checked(self, kind: str, actor: str, type: EventType, data: dict[str, Any]) -> None:
        """Append an event of ``type`` whose ``data`` is known to fit it (built from a validated
        model of the same fields): not checked again. A model call's data holds every message
        sent, so checking it again cost as much as the rest of recording the call."""
        self.events.append(
            Event.model_construct(
                t=round(time.monotonic() - self.t0, 6),
                kind=kind,
                type=type,
                actor=actor,
                turn=self.turn,
                data=data,
            )
        )

    def add(self, kind: str, actor: str, **data: Any) -> None:
        """Append an event whose type follows from ``kind`` (see :func:`type_of_kind`)."""
        self.add_typed(kind, actor, type_of_kind(kind), data)

    def message(self, actor: str, text: str, **extra: Any) -> None:
        """``actor`` said ``text`` (kind ``<actor>_message``)."""
        self.add_typed(f"{actor}_message", actor, "message", {"text": text, **extra})

    def tool_call(
        self, kind: str, actor: str, arguments: dict[str, Any] | str, **extra: Any
    ) -> None:
        """``actor`` called a tool (``kind`` names it the benchmark's way)."""
        self.add_typed(kind, actor, "tool_call", {"arguments": arguments, **extra})

    def tool_result(self, kind: str, actor: str, **data: Any) -> None:
        """What a tool returned (``kind`` e.g. ``db_result``)."""
        self.add_typed(kind, actor, "tool_result", data)

    def count(self, *kinds: str) -> int:
        return sum(1 for e in self.events if e.kind in kinds)

    def violation(self, actor: str, reason: str, raw: str) -> None:
        """Record a format violation (in ``violations`` and as an event)."""
        self.violations.append({"turn": self.turn, "reason": reason, "raw": raw})
        self.add_typed("violation", actor, "violation", {"reason": reason, "raw": raw})

    def abort(self, actor: str, reason: str, raw: str) -> EpisodeEnd:
        """Record a format violation and return the end it causes (to raise)."""
        self.violation(actor, reason, raw)
        return EpisodeEnd(Outcome.ABORTED, Termination.FORMAT_VIOLATION, reason)

    def finish(self, end: EpisodeEnd) -> None:
        """The closing ``episode_end`` event."""
        data = {"outcome": end.outcome.value, "reason": end.reason}
        self.add_typed("episode_end", "game_master", "end", data)

    def _settle_end(self, outcome: Outcome, reason: str) -> None:
        """The last ``episode_end`` event carries ``outcome`` and ``reason``."""
        for i in range(len(self.events) - 1, -1, -1):
            event = self.events[i]
            if event.kind != "episode_end":
                continue
            said = event.data
            if said.get("outcome") != outcome.value or said.get("reason") != reason:
                data = {
                    "outcome": outcome.value,
                    "reason": reason,
                    "dialogue_outcome": said.get("dialogue_outcome", said.get("outcome")),
                    "dialogue_reason": said.get("dialogue_reason", said.get("reason")),
                }
                self.events[i] = event.model_copy(update={"data": data})
            return

    def record(
        self,
        *,
        benchmark: str,
        streams: EpisodeStreams,
        end: EpisodeEnd,
        outcome: Outcome | None = None,
        reason: str | None = None,
        group: str = "",
        metrics: dict[str, float] | None = None,
        labels: dict[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> EpisodeRecord:
        """The episode's record; ``outcome``/``reason`` override the end's (after scoring).

        The closing ``episode_end`` event then says the record's outcome too, with how the
        dialogue itself ended beside it (``dialogue_outcome``, ``dialogue_reason``): a record
        never ends its transcript with an outcome it does not have."""
        final = outcome or end.outcome
        why = end.reason if reason is None else reason
        self._settle_end(final, why)
        return EpisodeRecord(
            benchmark=benchmark,
            episode_id=episode_id(streams.task_id, streams.trial),
            task_id=streams.task_id,
            trial=streams.trial,
            seed=streams.seed,
            group=group,
            outcome=final,
            termination=end.termination.value,
            reason=why,
            metrics=metrics or {},
            turns=self.turn,
            events=self.events,
            usage=sum_usage(self.usage),
            timing=Timing(
                started_at=self.started_at,
                ended_at=utc_now(),
                duration_s=round(time.monotonic() - self.t0, 6),
            ),
            labels=labels or {},
            details=details or {},
        )
