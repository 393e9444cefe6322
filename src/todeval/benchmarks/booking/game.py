"""The game master: plays one self-play booking episode and records everything.

Loop (clem:todd protocol): the user speaks first; at most ``max_turns`` user turns; in each turn
the system may chain DB queries and booking attempts and ends its turn with a follow-up message.
The user ends the dialogue with ``done``; a user simulator that says it gave up
(``end_reason``: :data:`~.users.ending.GAVE_UP`) ends it too, but its episode is scored as not
completed (0): the user left without a booking, whatever the system booked without telling it.
A system output that is not a valid action is a format violation: with
``on_violation='abort'`` (the paper's rule) the episode aborts; with ``'reprompt'`` the system
gets one corrective notice, and a second consecutive violation aborts.
Every violation is recorded.

What the two rule sets disagree on -- parsing, DB search, booking validation, the inner-loop cap
(``max_calls_per_turn`` outputs per turn under ``strict``, consecutive calls of one kind under
``clemtodd``), queued calls and the end signal -- is delegated to the run's
:class:`~.rules.GameProtocol`. Under ``clemtodd`` further tool calls of one response are
queued and played as the system's next outputs without asking the system (it is shown each
result through ``observe`` if it has one); a follow-up among them ends the turn and the rest
stay queued for the next turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from todeval.benchmarks.booking.environment import BookingEnvironment
from todeval.benchmarks.booking.messages import (
    Action,
    BookingRequest,
    BookingResult,
    BookingSystem,
    DbQuery,
    DbResult,
    FollowUp,
    Observation,
    ObservesQueuedCalls,
    SystemContext,
    SystemOutput,
    SystemStart,
    ToolCall,
    UserContext,
    UserMessage,
    UserSimulator,
    Violation,
    ViolationNotice,
)
from todeval.benchmarks.booking.players import SYSTEM, USER
from todeval.benchmarks.booking.rules import PROTOCOLS, GameProtocol, get_protocol
from todeval.benchmarks.booking.schema import FOLLOWUP
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.taxonomy import classify, unrealistic_class
from todeval.benchmarks.booking.users.ending import GAVE_UP
from todeval.benchmarks.booking.world.of_task_set import played_world, world_of
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, EpisodeStreams, Termination, guarded
from todeval.dialogue.participants import ReportsEndReason, finish_players

BENCHMARK = "booking"
OnViolation = Literal["abort", "reprompt"]


@dataclass(frozen=True)
class GameRules:
    max_turns: int = 15
    max_calls_per_turn: int = 15
    on_violation: OnViolation = "abort"
    protocol: str = PROTOCOLS[0]


def expected_output(protocol: GameProtocol, violation: Violation) -> str:
    """What a built-in system was expected to send instead (for the aborted episode's reason):
    the tool's arguments when the call named one, else the action shape and the tool names."""
    tools = protocol.world.tool_parameters()
    name = violation.raw.split("(", 1)[0].strip().lower()
    if violation.reason != "no tool call" and name in tools:
        schema = tools[name]
        required = set(schema.get("required", ()))
        keys = ", ".join(k + "*" * (k in required) for k in schema.get("properties", {}))
        return f"expected {name} with a JSON object of {{{keys}}} (* required)"
    names = ", ".join(n for n in tools if n != FOLLOWUP)
    shape = (
        f'expected one tool call per output: {FOLLOWUP} {{"message": TEXT}} to speak to the '
        f"user, or one of {names}"
    )
    if violation.reason != "no tool call":
        return shape
    text = " ".join(violation.raw.split())
    sent = f'text "{text[:60]}..."' if len(text) > 60 else f'text "{text}"' if text else "nothing"
    return f"{shape}; the system sent {sent}"


def episode_environment(
    task: BookingTask, streams: EpisodeStreams, protocol: str = "strict"
) -> BookingEnvironment:
    """An episode's fresh DB and bookings, drawing on the episode's ``game_master`` stream, in
    the world ``protocol`` plays the task set in."""
    return BookingEnvironment(
        played_world(task.task_set, protocol),
        task.booking_domains,
        streams.rng("game_master"),
        goal_domains=list(task.domains),
    )


def play_action(
    log: EpisodeLog,
    protocol: GameProtocol,
    env: BookingEnvironment,
    task: BookingTask,
    action: DbQuery | BookingRequest,
    **flag: Any,
) -> DbResult | BookingResult:
    """Run one parsed DB search or booking under ``protocol`` and record it as the game master
    does: the request event (with ``flag``, e.g. ``queued=True``), then the result event."""
    result: DbResult | BookingResult
    if isinstance(action, DbQuery):
        log.tool_call("db_query", "system", action.constraints, domain=action.domain, **flag)
        result = protocol.search(env, action.domain, action.constraints)
    else:
        log.tool_call("booking_request", "system", action.slots, domain=action.domain, **flag)
        goal = task.domains.get(action.domain)
        keys = list(goal.book) if goal is not None else []
        result = protocol.book(env, action.domain, action.slots, keys)
    log.tool_result(result.kind, "game_master", **result.model_dump(exclude={"kind", "query"}))
    return result


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
        self.protocol = get_protocol(self.rules.protocol, task.task_set)
        self.queue: list[ToolCall] = []  # further calls of a response, played in order
        self.env = episode_environment(task, self.streams, self.rules.protocol)
        self.log = EpisodeLog()

    async def _start_players(self) -> None:
        streams = self.streams
        start_user = USER.start(
            self.user,
            UserContext(
                task=self.task,
                rng=streams.rng("user"),
                seed=streams.seed_of("user"),
                trial=self.trial,
            ),
        )
        await guarded(start_user, "user simulator", Termination.SIMULATOR_ERROR)
        context = SystemContext(
            task_set=self.task.task_set,
            tools=world_of(self.task.task_set).tools_list(),
            rng=streams.rng("system"),
            seed=streams.seed_of("system"),
            queues_calls=self.protocol.queues_calls,
        )
        start_system = SYSTEM.start(self.system, SystemStart(context, self.task))
        await guarded(start_system, "system", Termination.SYSTEM_ERROR)

    async def _user_turn(self, system_message: str | None) -> str:
        reply = await guarded(
            self.user.respond(system_message), "user simulator", Termination.SIMULATOR_ERROR
        )
        self.log.usage.extend(reply.usage)
        self.log.add("user_message", "user", text=reply.text)
        return reply.text

    async def _system_call(self, observation: Observation) -> tuple[Action | Violation, bool]:
        """The system's next output, parsed; True when it was a queued call of an earlier one."""
        if self.queue:
            if isinstance(self.system, ObservesQueuedCalls):
                self.system.observe(observation)
            call = self.queue.pop(0)
            return self.protocol.parse(call), True
        output = await guarded(self.system.respond(observation), "system", Termination.SYSTEM_ERROR)
        self.log.usage.extend(output.usage)
        if self.protocol.queues_calls and output.tool_call is not None:
            self.queue = list(output.more_calls)
        return self._parse(output), False

    def _parse(self, output: SystemOutput) -> Action | Violation:
        return self.protocol.parse(output.tool_call, output.text)

    async def _system_turn(self, user_text: str) -> str:
        observation: Observation = UserMessage(text=user_text)
        reprompted = False
        counter = self.protocol.turn_counter(self.rules.max_calls_per_turn)
        self.protocol.user_turn()
        while True:
            capped = counter.before_output()
            if capped:
                raise EpisodeEnd(Outcome.ABORTED, Termination.INNER_LOOP_CAP, capped)
            action, queued = await self._system_call(observation)
            flag = {"queued": True} if queued else {}
            if isinstance(action, Violation):
                self.log.violation("system", action.reason, action.raw)
                self.queue = []
                if self.rules.on_violation == "abort" or reprompted:
                    expected = expected_output(self.protocol, action)
                    raise EpisodeEnd(
                        Outcome.ABORTED,
                        Termination.FORMAT_VIOLATION,
                        f"format violation: {action.reason}; {expected}",
                    )
                reprompted = True
                observation = ViolationNotice(reason=action.reason)
                continue
            reprompted = False
            if isinstance(action, FollowUp):
                self.log.add("system_message", "system", text=action.message, **flag)
                return action.message
            capped = counter.before_call("db_query" if isinstance(action, DbQuery) else "booking")
            if capped:
                raise EpisodeEnd(Outcome.ABORTED, Termination.INNER_LOOP_CAP, capped)
            observation = play_action(
                self.log, self.protocol, self.env, self.task, action, **flag
            )  # fmt: skip

    async def _dialogue(self) -> EpisodeEnd:
        await self._start_players()
        system_message: str | None = None
        for turn in range(1, self.rules.max_turns + 1):
            self.log.turn = turn
            user_text = await self._user_turn(system_message)
            if self.protocol.ends_on_empty(user_text):
                return EpisodeEnd(
                    Outcome.USER_SIMULATOR_ERROR, Termination.SIMULATOR_ERROR, "empty user reply"
                )
            if self.protocol.is_done(user_text):
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
        finally:
            await finish_players(self.system, self.user)
        self.log.finish(end)
        return self._record(end)

    def _record(self, end: EpisodeEnd) -> EpisodeRecord:
        # A user that gave up left without its booking: what the system booked without telling
        # it (no reference the user took) is not scored, however well it fits the goal.
        user_end = self.user.end_reason if isinstance(self.user, ReportsEndReason) else None
        scored = end.completed and user_end not in GAVE_UP
        score = self.protocol.score(self.task, self.env, scored)
        outcome = end.outcome
        if outcome is Outcome.SUCCESS and score.booking_accuracy < 1.0:
            outcome = Outcome.FAILURE
        turns = self.log.turn
        n_violations = len(self.log.violations)
        system_calls = self.log.count("system_message", "db_query", "booking_request", "violation")
        metrics = {
            "booking.inform": score.inform,
            "booking.booking_accuracy": score.booking_accuracy,
            "booking.aborted": float(outcome is Outcome.ABORTED),
            "booking.turn_cap": float(end.termination is Termination.TURN_CAP),
            "booking.format_violations": float(n_violations),
            "booking.violations_per_turn": n_violations / max(turns, 1),
            "booking.turns": float(turns),
            "booking.system_calls": float(system_calls),
            "booking.db_queries": float(self.log.count("db_query")),
            "booking.booking_attempts": float(self.log.count("booking_request")),
        }
        if score.attributes is not None:  # not applicable: no goal domain requests one
            metrics["booking.attributes"] = score.attributes
        failure_class = classify(
            outcome, end.termination, end.completed, self.env.bookings, self.task,
            self.log.violations,
        )  # fmt: skip
        labels = {"failure_class": failure_class}
        if self.task.task_set == "unrealistic":
            labels["unrealistic"] = unrealistic_class(self.task, failure_class, self.log.events)
        reason = end.reason
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
                **self.protocol.scored_details(self.env),
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
