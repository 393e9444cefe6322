"""What flows between the game master and the players of the booking benchmark.

* The **user simulator** receives the system's follow-up messages and answers in plain text;
  it ends the episode by replying exactly ``done``.
* The **dialogue system** receives :data:`Observation` s (a user message, a DB result, a booking
  result) and answers each with one :class:`SystemOutput`: a tool call (``followup``, a DB
  query, or a booking validation) or, when it failed to produce one, raw text. The game master
  parses and validates every output against the tool schema (:mod:`.schema`); anything that is
  not a valid action is a *format violation*.

Both players are async so many episodes can share one event loop.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

import jsonschema
from pydantic import BaseModel, Field

from todeval.benchmarks.booking.schema import BOOKING_TOOLS, DB_TOOLS, FOLLOWUP
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core import safejson
from todeval.core.records import CallUsage
from todeval.dialogue.participants import Participant

# ---------------------------------------------------------------------------------------------
# Observations sent to the dialogue system


class UserMessage(BaseModel):
    kind: Literal["user_message"] = "user_message"
    text: str


class DbResult(BaseModel):
    kind: Literal["db_result"] = "db_result"
    domain: str
    query: dict[str, Any]
    rows: list[dict[str, str]] = Field(description="at most 5 rows")
    total: int = Field(description="number of rows that matched")
    message: str


class BookingResult(BaseModel):
    kind: Literal["booking_result"] = "booking_result"
    domain: str
    ok: bool
    reference: str | None = None
    message: str


class ViolationNotice(BaseModel):
    """Sent only with ``on_violation='reprompt'``: the last output was not a valid action."""

    kind: Literal["violation"] = "violation"
    reason: str


Observation = Annotated[
    UserMessage | DbResult | BookingResult | ViolationNotice, Field(discriminator="kind")
]

# ---------------------------------------------------------------------------------------------
# System outputs and their parsed actions


class ToolCall(BaseModel):
    name: str
    arguments: dict[str, Any] | str = Field(description="a JSON object, or its raw text")


class SystemOutput(BaseModel):
    """One reply of the dialogue system: ideally exactly one tool call.

    ``more_calls`` holds any further tool calls of the same model response, in order. Under the
    ``clemtodd`` protocol the game master queues them and plays each as the system's next output
    (without asking the system again); under ``strict`` only ``tool_call`` is acted on.
    """

    tool_call: ToolCall | None = None
    more_calls: list[ToolCall] = Field(default_factory=list)
    text: str | None = Field(None, description="raw model text (kept for violations)")
    usage: list[CallUsage] = Field(default_factory=list)


class FollowUp(BaseModel):
    kind: Literal["followup"] = "followup"
    message: str


class DbQuery(BaseModel):
    kind: Literal["db_query"] = "db_query"
    domain: str
    constraints: dict[str, Any]


class BookingRequest(BaseModel):
    kind: Literal["booking"] = "booking"
    domain: str
    slots: dict[str, Any] = Field(
        description="the booking arguments: text under strict, values as given under clemtodd"
    )


Action = FollowUp | DbQuery | BookingRequest


class Violation(BaseModel):
    kind: Literal["violation"] = "violation"
    reason: str
    raw: str


def _raw_text(output: SystemOutput) -> str:
    if output.tool_call is not None:
        args = output.tool_call.arguments
        if isinstance(args, str):
            body = args
        else:
            try:
                safejson.check_depth(args)
                body = json.dumps(args, ensure_ascii=False)
            except safejson.JsonDepthError as exc:
                body = f"<arguments {exc}>"
        return f"{output.tool_call.name}({body})"
    return output.text or ""


@dataclass(frozen=True)
class ActionParser:
    """Validates system outputs against one task set's tool schemas."""

    validators: dict[str, jsonschema.protocols.Validator]
    db_tools: Mapping[str, str] = field(default_factory=lambda: dict(DB_TOOLS))
    booking_tools: Mapping[str, str] = field(default_factory=lambda: dict(BOOKING_TOOLS))

    @classmethod
    def for_task_set(cls, task_set: str) -> ActionParser:
        world = world_of(task_set)
        return cls(
            {
                name: jsonschema.Draft202012Validator(params)
                for name, params in world.tool_parameters().items()
            },
            dict(world.db_tools),
            dict(world.booking_tools),
        )

    def parse(self, output: SystemOutput) -> Action | Violation:
        raw = _raw_text(output)
        call = output.tool_call
        if call is None:
            return Violation(reason="no tool call", raw=raw)
        name = call.name.strip().lower()
        validator = self.validators.get(name)
        if validator is None:
            return Violation(reason=f"unknown tool {call.name!r}", raw=raw)
        args: Any = call.arguments
        try:
            if isinstance(args, str):
                args = safejson.loads(args) if args.strip() else {}
            else:
                safejson.check_depth(args)
        except safejson.JsonDepthError as exc:
            return Violation(reason=f"arguments {exc}", raw=raw)
        except json.JSONDecodeError as exc:
            return Violation(reason=f"arguments are not valid JSON ({exc.msg})", raw=raw)
        if not isinstance(args, dict):
            return Violation(reason="arguments are not a JSON object", raw=raw)
        error = jsonschema.exceptions.best_match(validator.iter_errors(args))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "arguments"
            return Violation(reason=f"schema violation at {where}: {error.message}", raw=raw)
        if name == FOLLOWUP:
            message = str(args["message"])
            if not message.strip():
                return Violation(reason="empty follow-up message", raw=raw)
            return FollowUp(message=message)
        if name in self.db_tools:
            return DbQuery(domain=self.db_tools[name], constraints=args)
        return BookingRequest(
            domain=self.booking_tools[name], slots={k: str(v) for k, v in args.items()}
        )


# ---------------------------------------------------------------------------------------------
# Users

_DONE = re.compile(r"^\s*done\s*[,.]?\s*$", re.IGNORECASE)


def is_done(text: str) -> bool:
    """The user's end-of-dialogue signal: exactly ``done`` (any case), optionally + ``,``/``.``."""
    return bool(_DONE.match(text))


class UserReply(BaseModel):
    text: str
    usage: list[CallUsage] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Player protocols


@dataclass
class SystemContext:
    """What a dialogue system knows when an episode starts: never the user's goal.

    ``task_set`` names the world it operates in (``world_of(task_set)`` in
    :mod:`.world.of_task_set` gives a system its own back-end data, as a deployed system would
    have); ``tools`` are the task set's tool definitions. ``rng`` is the system's own stream,
    derived from (run seed, task id, trial, "system"): use it for every random choice.
    """

    task_set: str
    tools: list[dict[str, Any]]
    rng: random.Random
    seed: int
    queues_calls: bool = False
    """True when the game master plays every tool call of a response in order (``clemtodd``):
    a system then keeps all of them in its history and is shown each call's result through
    :meth:`ObservesQueuedCalls.observe`."""


@dataclass
class SystemStart:
    """What the game master knows when a system starts: the system's context and the task, goal
    included. A system is handed :func:`system_view` of it; only a privileged one (the
    ``oracle`` control) is handed all of it."""

    context: SystemContext
    task: BookingTask


def system_view(full: SystemStart) -> SystemContext:
    """The system role's view: the task set, its tools and random stream, never the goal."""
    return full.context


@runtime_checkable
class ObservesQueuedCalls(Protocol):
    """Optional: a system that wants the results of its queued calls (see ``more_calls``).

    While the game master plays queued calls it does not call ``respond``; it passes each
    observation (the previous call's result) to ``observe`` instead.
    """

    def observe(self, observation: Observation) -> None: ...


@dataclass
class UserContext:
    """What a user simulator knows when an episode starts: the task (its goal)."""

    task: BookingTask
    rng: random.Random
    seed: int
    trial: int = 0


@runtime_checkable
class BookingSystem(Participant[SystemContext, Observation, SystemOutput], Protocol):
    """A dialogue system under test. One instance plays one episode."""

    async def start(self, context: SystemContext) -> None: ...

    async def respond(self, observation: Observation) -> SystemOutput: ...


@runtime_checkable
class UserSimulator(Participant[UserContext, "str | None", UserReply], Protocol):
    """A user simulator. One instance plays one episode; ``respond(None)`` opens the dialogue
    and ``respond(message)`` answers the system's follow-up message."""

    async def start(self, context: UserContext) -> None: ...

    async def respond(self, observation: str | None) -> UserReply: ...
