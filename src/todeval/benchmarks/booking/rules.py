"""The game master's rule sets (``--protocol``) and its handling of one system output.

A :class:`GameProtocol` decides everything the two rule sets disagree on: how a tool call is
parsed, how a DB search and a booking are run, when the inner loop is capped, whether further
calls of one response are queued, and what ends the dialogue. :mod:`.game` plays an episode
with one of them; :func:`handle_output` applies one to a single raw system output, so another
implementation can be compared with this one call by call without private names.

* ``clemtodd`` (the default): the released clem:todd game master's rules, see :mod:`.clemtodd`.
* ``strict``: every tool call is validated against the tools' JSON schema (enums, required keys,
  ``HH:MM`` times, no unknown keys) and a violation aborts; values are normalised like the data
  (stripped, ``free`` -> ``yes``, ``guest house`` -> ``guesthouse``, dontcare-like values
  ignored); train times in a booking act as bounds; at most ``max_calls_per_turn`` outputs per
  user turn; one tool call per response is acted on; a domain in which one user turn saw
  successful bookings of two or more different rows earns nothing (:class:`Strict`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from todeval.benchmarks.booking import clemtodd
from todeval.benchmarks.booking.environment import Booking, BookingEnvironment
from todeval.benchmarks.booking.messages import (
    Action,
    ActionParser,
    BookingRequest,
    BookingResult,
    DbQuery,
    DbResult,
    FollowUp,
    SystemOutput,
    ToolCall,
    Violation,
    is_done,
)
from todeval.benchmarks.booking.scoring import (
    EpisodeScore,
    score_episode,
    score_episode_from_calls,
)
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.world.of_task_set import played_world, world_of

CallKind = Literal["db_query", "booking"]


class TurnCounter:
    """Counts one user turn's system outputs and calls; says when the inner loop is capped."""

    def before_output(self) -> str | None:
        """Called before each system output; a reason ends the episode (inner-loop cap)."""
        return None

    def before_call(self, kind: CallKind) -> str | None:
        """Called before a DB search or booking is run; a reason ends the episode."""
        return None


class _OutputsPerTurn(TurnCounter):
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.outputs = 0

    def before_output(self) -> str | None:
        if self.outputs >= self.cap:
            return f"inner-loop cap: {self.cap} calls without a follow-up"
        self.outputs += 1
        return None


class _ConsecutiveCalls(TurnCounter):
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kind: CallKind | None = None
        self.run = 0

    def before_call(self, kind: CallKind) -> str | None:
        self.run = self.run + 1 if kind == self.kind else 1
        self.kind = kind
        if self.run > self.cap:
            noun = "DB searches" if kind == "db_query" else "bookings"
            return f"inner-loop cap: more than {self.cap} consecutive {noun}"
        return None


class GameProtocol:
    """One rule set of the game master (subclasses: :class:`Strict`, :class:`ClemTodd`)."""

    name: ClassVar[str]
    queues_calls: ClassVar[bool] = False
    """Further tool calls of one response are played as the system's next outputs."""

    def __init__(self, task_set: str) -> None:
        self.task_set = task_set
        self.world = world_of(task_set)

    def parse(self, call: ToolCall | None, text: str | None = None) -> Action | Violation:
        raise NotImplementedError

    def search(self, env: BookingEnvironment, domain: str, constraints: dict[str, Any]) -> DbResult:
        raise NotImplementedError

    def book(
        self,
        env: BookingEnvironment,
        domain: str,
        slots: dict[str, Any],
        goal_book_keys: Sequence[str] = (),
    ) -> BookingResult:
        raise NotImplementedError

    def is_done(self, text: str) -> bool:
        raise NotImplementedError

    def ends_on_empty(self, text: str) -> bool:
        """Does this user reply end the episode as a simulator error (an empty reply)?"""
        return not text.strip()

    def turn_counter(self, max_calls_per_turn: int) -> TurnCounter:
        raise NotImplementedError

    def user_turn(self) -> None:
        """Called as each user turn begins (before the system's outputs for it are played)."""

    def score(self, task: BookingTask, env: BookingEnvironment, completed: bool) -> EpisodeScore:
        """The episode's scores: the booked rows against the goal (``strict``)."""
        return score_episode(task, env.bookings, completed)

    def scored_details(self, env: BookingEnvironment) -> dict[str, Any]:
        """What the scores were computed on, beyond the bookings (for the record's details)."""
        return {}


class Strict(GameProtocol):
    """Schema-validated tool calls, normalised values (todeval's own rules).

    One deviation in scoring (issue 41): credit goes to the row the system commits to. A domain
    in which the system booked two or more *different* rows within one user turn -- before the
    user could say a word about the first -- earns neither Inform nor booking accuracy, whatever
    the last of them was: booking every row shown is a draw, not a choice. A rebooking after the
    user spoke (the user asked for a change) and booking one row again with other details are
    not affected. ``clemtodd`` scores every booking's arguments merged, as the original does."""

    name = "strict"

    def __init__(self, task_set: str) -> None:
        super().__init__(task_set)
        self.parser = ActionParser.for_task_set(task_set)
        self._turn_rows: dict[str, set[tuple[tuple[str, str], ...]]] = {}
        self.several: set[str] = set()
        """Domains with different rows booked within one user turn (scored as not booked)."""

    def user_turn(self) -> None:
        self._turn_rows = {}

    def parse(self, call: ToolCall | None, text: str | None = None) -> Action | Violation:
        return self.parser.parse(SystemOutput(tool_call=call, text=text))

    def search(self, env: BookingEnvironment, domain: str, constraints: dict[str, Any]) -> DbResult:
        return env.search(domain, constraints)

    def book(
        self,
        env: BookingEnvironment,
        domain: str,
        slots: dict[str, Any],
        goal_book_keys: Sequence[str] = (),
    ) -> BookingResult:
        result = env.book(domain, {k: str(v) for k, v in slots.items()})
        if result.ok and domain in env.bookings:
            rows = self._turn_rows.setdefault(domain, set())
            rows.add(tuple(sorted(env.bookings[domain].info.items())))
            if len(rows) > 1:
                self.several.add(domain)
        return result

    def is_done(self, text: str) -> bool:
        return is_done(text)

    def turn_counter(self, max_calls_per_turn: int) -> TurnCounter:
        return _OutputsPerTurn(max_calls_per_turn)

    def score(self, task: BookingTask, env: BookingEnvironment, completed: bool) -> EpisodeScore:
        return score_episode(task, env.bookings, completed, several=self.several)


class ClemTodd(GameProtocol):
    """The released clem:todd game master's rules (:mod:`.clemtodd`)."""

    name = "clemtodd"
    queues_calls = True

    def parse(self, call: ToolCall | None, text: str | None = None) -> Action | Violation:
        return clemtodd.parse_call(call, text, self.world)

    def search(self, env: BookingEnvironment, domain: str, constraints: dict[str, Any]) -> DbResult:
        return clemtodd.search(env, domain, constraints)

    def book(
        self,
        env: BookingEnvironment,
        domain: str,
        slots: dict[str, Any],
        goal_book_keys: Sequence[str] = (),
    ) -> BookingResult:
        return clemtodd.book(env, domain, slots, tuple(goal_book_keys))

    def is_done(self, text: str) -> bool:
        return clemtodd.is_done(text)

    def ends_on_empty(self, text: str) -> bool:
        return text == ""  # master.py passes a whitespace-only reply on

    def score(self, task: BookingTask, env: BookingEnvironment, completed: bool) -> EpisodeScore:
        return score_episode_from_calls(task, env.generated, completed)

    def scored_details(self, env: BookingEnvironment) -> dict[str, Any]:
        return {"generated_slots": {d: dict(v) for d, v in env.generated.items()}}

    def turn_counter(self, max_calls_per_turn: int) -> TurnCounter:
        return _ConsecutiveCalls(max_calls_per_turn)


PROTOCOL_CLASSES: dict[str, type[GameProtocol]] = {"clemtodd": ClemTodd, "strict": Strict}
PROTOCOLS = tuple(PROTOCOL_CLASSES)
"""The rule sets' names; the first is the default."""


def get_protocol(name: str, task_set: str) -> GameProtocol:
    """The rule set ``name`` for ``task_set`` (KeyError for an unknown name)."""
    return PROTOCOL_CLASSES[name](task_set)


# ---------------------------------------------------------------------------------------------
# One system output, handled as the game master handles it


class CallHandling(BaseModel):
    """One tool call of a response: the parsed action or the violation, and the tool's result."""

    action: FollowUp | DbQuery | BookingRequest | None = None
    violation: Violation | None = None
    result: DbResult | BookingResult | None = None


class OutputHandling(BaseModel):
    """What the game master makes of one system output under one protocol."""

    protocol: str
    calls: list[CallHandling] = Field(description="the calls played, in order")
    dropped: int = Field(0, description="further calls of the response that were not played")
    bookings: dict[str, Booking] = Field(default_factory=dict, description="successful bookings")

    @property
    def actions(self) -> list[FollowUp | DbQuery | BookingRequest]:
        return [c.action for c in self.calls if c.action is not None]

    @property
    def violation(self) -> Violation | None:
        return next((c.violation for c in self.calls if c.violation is not None), None)


def _as_output(raw: SystemOutput | Mapping[str, Any] | Sequence[Any] | str) -> SystemOutput:
    if isinstance(raw, SystemOutput):
        return raw
    if isinstance(raw, str):
        return SystemOutput(text=raw)
    items = [raw] if isinstance(raw, Mapping) else list(raw)
    calls = [ToolCall.model_validate(item) for item in items]
    if not calls:
        return SystemOutput()
    return SystemOutput(tool_call=calls[0], more_calls=calls[1:])


def handle_output(
    task_set: str,
    protocol: str,
    goal_domains: Sequence[str],
    output: SystemOutput | Mapping[str, Any] | Sequence[Any] | str,
    *,
    goal_book_keys: Mapping[str, Sequence[str]] | None = None,
    seed: int = 0,
) -> OutputHandling:
    """Handle one raw system output as the game master does, with a fresh DB and no bookings.

    ``output`` is a :class:`~.messages.SystemOutput`, one tool call ``{"name", "arguments"}``
    (arguments as an object or its JSON text), a list of them (one model response with several
    calls), or plain text (no tool call). ``goal_domains`` are the domains the goal books in;
    ``goal_book_keys`` the goal's booking keys per domain (``clemtodd`` requires them present).
    Calls are played in order (all of them under ``clemtodd``, the first under ``strict``) until
    a violation; each played call gets its action or violation and, for a DB search or booking,
    its result. The inner-loop cap and follow-ups ending a turn are left to the episode loop.
    """
    rules = get_protocol(protocol, task_set)
    env = BookingEnvironment(
        played_world(task_set, protocol), list(goal_domains), random.Random(seed)
    )  # the goal's domains are its booking domains here
    out = _as_output(output)
    calls: list[ToolCall | None] = [out.tool_call]
    extra = list(out.more_calls) if out.tool_call is not None else []
    if rules.queues_calls:
        calls.extend(extra)
        extra = []
    handled: list[CallHandling] = []
    for index, call in enumerate(calls):
        parsed = rules.parse(call, out.text if index == 0 else None)
        if isinstance(parsed, Violation):
            handled.append(CallHandling(violation=parsed))
            extra.extend(c for c in calls[index + 1 :] if c is not None)
            break
        result: DbResult | BookingResult | None = None
        if isinstance(parsed, DbQuery):
            result = rules.search(env, parsed.domain, parsed.constraints)
        elif isinstance(parsed, BookingRequest):
            keys = (goal_book_keys or {}).get(parsed.domain, ())
            result = rules.book(env, parsed.domain, parsed.slots, keys)
        handled.append(CallHandling(action=parsed, result=result))
    return OutputHandling(
        protocol=protocol, calls=handled, dropped=len(extra), bookings=dict(env.bookings)
    )
