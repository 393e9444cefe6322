"""The game master: plays one self-play booking episode and records everything.

Loop (clem:todd protocol): the user speaks first; at most ``max_turns`` user turns; in each turn
the system may chain DB queries and booking attempts (at most ``max_calls_per_turn`` outputs)
and ends its turn with a follow-up message. The user ends the dialogue with exactly ``done``.
A system output that is not a valid action is a format violation: with ``on_violation='abort'``
(the paper's rule) the episode aborts; with ``'reprompt'`` the system gets one corrective
notice, and a second consecutive violation aborts. Every violation is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from todeval.benchmarks.booking.db import load_database
from todeval.benchmarks.booking.environment import BookingEnvironment
from todeval.benchmarks.booking.protocol import (
    Action,
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
from todeval.core.records import EpisodeRecord
from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, EpisodeStreams, Termination, guarded
from todeval.dialogue.participants import ReportsEndReason

BENCHMARK = "booking"
OnViolation = Literal["abort", "reprompt"]


@dataclass(frozen=True)
class GameRules:
    max_turns: int = 15
    max_calls_per_turn: int = 15
    on_violation: OnViolation = "abort"


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
        self.streams = EpisodeStreams(run_seed, task.task_id, trial)
        self.seed = self.streams.seed
        self.parser = ActionParser.for_task_set(task.task_set)
        self.env = BookingEnvironment(
            load_database(task.task_set),
            slot_values(task.task_set),
            task.booking_domains,
            self.streams.rng("game_master"),
        )
        self.log = EpisodeLog()

    async def _start_players(self) -> None:
        streams = self.streams
        start_user = self.user.start(
            UserContext(task=self.task, rng=streams.rng("user"), seed=streams.seed_of("user"))
        )
        await guarded(start_user, "user simulator", Termination.SIMULATOR_ERROR)
        start_system = self.system.start(
            SystemContext(
                task_set=self.task.task_set,
                tools=tool_definitions(self.task.task_set),
                rng=streams.rng("system"),
                seed=streams.seed_of("system"),
            )
        )
        await guarded(start_system, "system", Termination.SYSTEM_ERROR)

    async def _user_turn(self, system_message: str | None) -> str:
        reply = await guarded(
            self.user.respond(system_message), "user simulator", Termination.SIMULATOR_ERROR
        )
        self.log.usage.extend(reply.usage)
        self.log.add("user_message", "user", text=reply.text)
        return reply.text

    async def _system_call(self, observation: Observation) -> Action | Violation:
        output = await guarded(self.system.respond(observation), "system", Termination.SYSTEM_ERROR)
        self.log.usage.extend(output.usage)
        return self.parser.parse(output)

    async def _system_turn(self, user_text: str) -> str:
        observation: Observation = UserMessage(text=user_text)
        reprompted = False
        for _call in range(self.rules.max_calls_per_turn):
            action = await self._system_call(observation)
            if isinstance(action, Violation):
                self.log.violation("system", action.reason, action.raw)
                if self.rules.on_violation == "abort" or reprompted:
                    raise EpisodeEnd(
                        Outcome.ABORTED,
                        Termination.FORMAT_VIOLATION,
                        f"format violation: {action.reason}",
                    )
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
        raise EpisodeEnd(
            Outcome.ABORTED,
            Termination.INNER_LOOP_CAP,
            f"inner-loop cap: {self.rules.max_calls_per_turn} calls without a follow-up",
        )

    async def _dialogue(self) -> EpisodeEnd:
        await self._start_players()
        system_message: str | None = None
        for turn in range(1, self.rules.max_turns + 1):
            self.log.turn = turn
            user_text = await self._user_turn(system_message)
            if not user_text.strip():
                return EpisodeEnd(
                    Outcome.USER_SIMULATOR_ERROR, Termination.SIMULATOR_ERROR, "empty user reply"
                )
            if is_done(user_text):
                if turn >= self.rules.max_turns:
                    return EpisodeEnd(
                        Outcome.FAILURE, Termination.TURN_CAP, "turn cap: done on the last turn"
                    )
                return EpisodeEnd(
                    Outcome.SUCCESS, Termination.DONE, "user said done", completed=True
                )
            system_message = await self._system_turn(user_text)
        return EpisodeEnd(
            Outcome.FAILURE,
            Termination.TURN_CAP,
            f"turn cap: {self.rules.max_turns} turns without done",
        )

    async def play(self) -> EpisodeRecord:
        try:
            end = await self._dialogue()
        except EpisodeEnd as exc:
            end = exc
        self.log.finish(end)
        return self._record(end)

    def _record(self, end: EpisodeEnd) -> EpisodeRecord:
        score = score_episode(self.task, self.env.bookings, end.completed)
        outcome = end.outcome
        if outcome is Outcome.SUCCESS and score.booking_accuracy < 1.0:
            outcome = Outcome.FAILURE
        turns = self.log.turn
        n_violations = len(self.log.violations)
        system_calls = self.log.count("system_message", "db_query", "booking_request", "violation")
        metrics = {
            "booking.inform": score.inform,
            "booking.booking_accuracy": score.booking_accuracy,
            "booking.attributes": score.attributes,
            "booking.aborted": float(outcome is Outcome.ABORTED),
            "booking.turn_cap": float(end.termination is Termination.TURN_CAP),
            "booking.format_violations": float(n_violations),
            "booking.violations_per_turn": n_violations / max(turns, 1),
            "booking.turns": float(turns),
            "booking.system_calls": float(system_calls),
            "booking.db_queries": float(self.log.count("db_query")),
            "booking.booking_attempts": float(self.log.count("booking_request")),
        }
        failure_class = classify(
            outcome, end.termination, end.completed, self.env.bookings, self.task,
            self.log.violations,
        )  # fmt: skip
        labels = {"failure_class": failure_class}
        if self.task.task_set == "unrealistic":
            labels["unrealistic"] = unrealistic_class(self.task, failure_class, self.log.events)
        reason = end.reason
        user_end = self.user.end_reason if isinstance(self.user, ReportsEndReason) else None
        if user_end:
            reason = f"{reason} ({user_end})"
        return self.log.record(
            benchmark=BENCHMARK,
            streams=self.streams,
            end=end,
            outcome=outcome,
            reason=reason,
            group=self.task.group,
            metrics=metrics,
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
