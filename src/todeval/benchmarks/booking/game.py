"""The game master: plays one self-play booking episode and records everything.

Loop (clem:todd protocol): the user speaks first; at most ``max_turns`` user turns; in each turn
the system may chain DB queries and booking attempts (at most ``max_calls_per_turn`` outputs)
and ends its turn with a follow-up message. The user ends the dialogue with exactly ``done``.
A system output that is not a valid action is a format violation: with ``on_violation='abort'``
(the paper's rule) the episode aborts; with ``'reprompt'`` the system gets one corrective
notice, and a second consecutive violation aborts. Every violation is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from todeval.benchmarks.booking.db import load_database
from todeval.benchmarks.booking.environment import BookingEnvironment
from todeval.benchmarks.booking.protocol import (
    ActionParser,
    BookingResult,
    BookingSystem,
    DbQuery,
    DbResult,
    FollowUp,
    Observation,
    SystemContext,
    UserContext,
    UserMessage,
    UserSimulator,
    Violation,
    ViolationNotice,
    is_done,
)
from todeval.benchmarks.booking.schema import slot_values, tool_definitions
from todeval.benchmarks.booking.scoring import score_episode
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.taxonomy import classify, unrealistic_class
from todeval.core.outcome import Outcome
from todeval.core.records import CallUsage, EpisodeRecord, Event, Timing, episode_id, sum_usage
from todeval.core.rng import derive_seed, episode_rng
from todeval.errors import InfrastructureError

BENCHMARK = "booking"
_T = TypeVar("_T")
OnViolation = Literal["abort", "reprompt"]


@dataclass(frozen=True)
class GameRules:
    max_turns: int = 15
    max_calls_per_turn: int = 15
    on_violation: OnViolation = "abort"


class _EpisodeEnd(Exception):
    def __init__(self, outcome: Outcome, reason: str, completed: bool = False) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.reason = reason
        self.completed = completed


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class _Log:
    t0: float = field(default_factory=time.monotonic)
    events: list[Event] = field(default_factory=list)
    usage: list[CallUsage] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    turn: int = 0

    def add(self, kind: str, actor: str, **data: Any) -> None:
        self.events.append(
            Event(
                t=round(time.monotonic() - self.t0, 6),
                kind=kind,
                actor=actor,
                turn=self.turn,
                data=data,
            )
        )


class GameMaster:
    """Runs one episode of ``task`` between ``user`` and ``system``."""

    def __init__(
        self,
        task: BookingTask,
        system: BookingSystem,
        user: UserSimulator,
        *,
        run_seed: int,
        trial: int = 0,
        rules: GameRules | None = None,
    ) -> None:
        self.task = task
        self.system = system
        self.user = user
        self.run_seed = run_seed
        self.trial = trial
        self.rules = rules or GameRules()
        self.seed = derive_seed(run_seed, task.task_id, trial)
        self.parser = ActionParser.for_task_set(task.task_set)
        self.env = BookingEnvironment(
            load_database(task.task_set),
            slot_values(task.task_set),
            task.booking_domains,
            episode_rng(run_seed, task.task_id, trial, "game_master"),
        )
        self.log = _Log()

    def _rng(self, stream: str) -> Any:
        return episode_rng(self.run_seed, self.task.task_id, self.trial, stream)

    async def _start_players(self) -> None:
        await self.user.start(
            UserContext(
                task=self.task,
                rng=self._rng("user"),
                seed=derive_seed(self.run_seed, self.task.task_id, self.trial, "user"),
            )
        )
        await self.system.start(
            SystemContext(
                task_set=self.task.task_set,
                tools=tool_definitions(self.task.task_set),
                rng=self._rng("system"),
                seed=derive_seed(self.run_seed, self.task.task_id, self.trial, "system"),
            )
        )

    @staticmethod
    async def _guarded(call: Awaitable[_T], who: str, crash: Outcome) -> _T:
        """Await a player; a model outage is an infrastructure error, any other crash ``crash``."""
        try:
            return await call
        except InfrastructureError as exc:
            raise _EpisodeEnd(Outcome.INFRASTRUCTURE_ERROR, f"{who} model: {exc}") from exc
        except Exception as exc:
            raise _EpisodeEnd(crash, f"{who} raised {type(exc).__name__}: {exc}") from exc

    async def _user_turn(self, system_message: str | None) -> str:
        reply = await self._guarded(
            self.user.reply(system_message), "user simulator", Outcome.USER_SIMULATOR_ERROR
        )
        self.log.usage.extend(reply.usage)
        self.log.add("user_message", "user", text=reply.text)
        return reply.text

    async def _system_call(self, observation: Observation) -> Any:
        output = await self._guarded(
            self.system.respond(observation), "system", Outcome.INFRASTRUCTURE_ERROR
        )
        self.log.usage.extend(output.usage)
        return self.parser.parse(output)

    async def _system_turn(self, user_text: str) -> str:
        observation: Observation = UserMessage(text=user_text)
        reprompted = False
        for _call in range(self.rules.max_calls_per_turn):
            action = await self._system_call(observation)
            if isinstance(action, Violation):
                self.log.violations.append(
                    {"turn": self.log.turn, "reason": action.reason, "raw": action.raw}
                )
                self.log.add("violation", "system", reason=action.reason, raw=action.raw)
                if self.rules.on_violation == "abort" or reprompted:
                    raise _EpisodeEnd(Outcome.ABORTED, f"format violation: {action.reason}")
                reprompted = True
                observation = ViolationNotice(reason=action.reason)
                continue
            reprompted = False
            if isinstance(action, FollowUp):
                self.log.add("system_message", "system", text=action.message)
                return action.message
            result: DbResult | BookingResult
            if isinstance(action, DbQuery):
                self.log.add(
                    "db_query", "system", domain=action.domain, arguments=action.constraints
                )
                result = self.env.search(action.domain, action.constraints)
            else:
                self.log.add(
                    "booking_request", "system", domain=action.domain, arguments=action.slots
                )
                result = self.env.book(action.domain, action.slots)
            self.log.add(result.kind, "game_master", **result.model_dump(exclude={"kind", "query"}))
            observation = result
        raise _EpisodeEnd(
            Outcome.ABORTED,
            f"inner-loop cap: {self.rules.max_calls_per_turn} calls without a follow-up",
        )

    async def _dialogue(self) -> _EpisodeEnd:
        await self._start_players()
        system_message: str | None = None
        for turn in range(1, self.rules.max_turns + 1):
            self.log.turn = turn
            user_text = await self._user_turn(system_message)
            if not user_text.strip():
                return _EpisodeEnd(Outcome.USER_SIMULATOR_ERROR, "empty user reply")
            if is_done(user_text):
                if turn >= self.rules.max_turns:
                    return _EpisodeEnd(Outcome.FAILURE, "turn cap: done on the last turn")
                return _EpisodeEnd(Outcome.SUCCESS, "user said done", completed=True)
            system_message = await self._system_turn(user_text)
        return _EpisodeEnd(Outcome.FAILURE, f"turn cap: {self.rules.max_turns} turns without done")

    async def play(self) -> EpisodeRecord:
        started_at, t0 = _now(), time.monotonic()
        try:
            end = await self._dialogue()
        except _EpisodeEnd as exc:
            end = exc
        self.log.add("episode_end", "game_master", outcome=end.outcome.value, reason=end.reason)
        return self._record(end, started_at, time.monotonic() - t0)

    def _record(self, end: _EpisodeEnd, started_at: str, duration: float) -> EpisodeRecord:
        score = score_episode(self.task, self.env.bookings, end.completed)
        outcome = end.outcome
        if outcome is Outcome.SUCCESS and score.booking_accuracy < 1.0:
            outcome = Outcome.FAILURE
        turns = self.log.turn
        n_violations = len(self.log.violations)
        system_calls = sum(
            1
            for e in self.log.events
            if e.kind in ("system_message", "db_query", "booking_request", "violation")
        )
        metrics = {
            "booking.inform": score.inform,
            "booking.booking_accuracy": score.booking_accuracy,
            "booking.attributes": score.attributes,
            "booking.aborted": float(outcome is Outcome.ABORTED),
            "booking.turn_cap": float(end.reason.startswith("turn cap")),
            "booking.format_violations": float(n_violations),
            "booking.violations_per_turn": n_violations / max(turns, 1),
            "booking.turns": float(turns),
            "booking.system_calls": float(system_calls),
            "booking.db_queries": float(sum(1 for e in self.log.events if e.kind == "db_query")),
            "booking.booking_attempts": float(
                sum(1 for e in self.log.events if e.kind == "booking_request")
            ),
        }
        failure_class = classify(
            outcome, end.reason, end.completed, self.env.bookings, self.task, self.log.violations
        )
        labels = {"failure_class": failure_class}
        if self.task.task_set == "unrealistic":
            labels["unrealistic"] = unrealistic_class(self.task, failure_class, self.log.events)
        reason = end.reason
        user_end = getattr(self.user, "end_reason", None)
        if user_end:
            reason = f"{reason} ({user_end})"
        return EpisodeRecord(
            benchmark=BENCHMARK,
            episode_id=episode_id(self.task.task_id, self.trial),
            task_id=self.task.task_id,
            trial=self.trial,
            seed=self.seed,
            group=self.task.group,
            outcome=outcome,
            reason=reason,
            metrics=metrics,
            turns=turns,
            events=self.log.events,
            usage=sum_usage(self.log.usage),
            timing=Timing(started_at=started_at, ended_at=_now(), duration_s=round(duration, 6)),
            labels=labels,
            details={
                "goal": {d: g.model_dump() for d, g in self.task.domains.items()},
                "bookings": {d: b.model_dump() for d, b in self.env.bookings.items()},
                "domain_scores": {d: s.model_dump() for d, s in score.domains.items()},
                "violations": self.log.violations,
            },
        )


async def play_episode(
    task: BookingTask,
    system: BookingSystem,
    user: UserSimulator,
    *,
    run_seed: int,
    trial: int = 0,
    rules: GameRules | None = None,
) -> EpisodeRecord:
    """Play one episode and return its record (never raises for player failures)."""
    return await GameMaster(task, system, user, run_seed=run_seed, trial=trial, rules=rules).play()
