"""Transcript events: one envelope, a small set of typed payloads.

Every event of an episode's transcript is an :class:`Event`: when (``t``), which user turn
(``turn``), who (``actor``), what (``kind``, the benchmark's own name for it) and of which
:data:`EventType` -- the type fixes what ``data`` holds:

=============  =======================================================================
type           ``data``
=============  =======================================================================
message        ``text`` (str), plus any fields the benchmark adds (``queued``, ...)
tool_call      ``arguments`` (an object or raw text), optional ``name``, plus extras
tool_result    anything the tool returned (``message`` a str when present)
model_call     :class:`ModelCallPayload`: the messages sent, the raw reply, tokens, latency,
               cache hit (``messages``/``reply`` null when the run omitted call text)
violation      ``reason`` and ``raw`` (the output that broke the format)
end            ``outcome`` and ``reason``
extra          a benchmark's own event: any object
=============  =======================================================================

``data`` is checked against its type whenever an event is built (written) or read, so a
transcript is either well-formed or refused. Records of todeval 0.2.0 and older carry no ``type``:
it is derived from the kind (``*_message`` message, ``model_call``, ``violation``,
``episode_end`` end, anything else extra), so older run directories read unchanged. The rule
is stated here so that a reader without todeval can apply it to a JSON line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EventType = Literal[
    "message", "tool_call", "tool_result", "model_call", "violation", "end", "extra"
]
EVENT_TYPES: tuple[EventType, ...] = (
    "message",
    "tool_call",
    "tool_result",
    "model_call",
    "violation",
    "end",
    "extra",
)

MODEL_CALL = "model_call"
"""The kind (and type) of a recorded model call."""


def type_of_kind(kind: str) -> EventType:
    """The type an event of ``kind`` has when its record names none (see the module)."""
    if kind.endswith("_message"):
        return "message"
    if kind == MODEL_CALL:
        return "model_call"
    if kind == "violation":
        return "violation"
    if kind == "episode_end":
        return "end"
    return "extra"


class MessagePayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    text: str


class ToolCallPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    arguments: dict[str, Any] | str
    name: str | None = None


class ToolResultPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    message: str | None = None


class ModelCallPayload(BaseModel):
    """One model call as a participant made it (see :class:`todeval.core.records.ModelCall`)."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description="the calling role or module, e.g. system.intent")
    model: str = ""
    messages: list[dict[str, Any]] | None = Field(
        description="the chat messages sent (null: the run was started with --no-record-calls)"
    )
    reply: str | None = Field(description="the raw reply text (null: omitted as above)")
    tool_calls: list[dict[str, str]] = Field(
        default_factory=list, description="tool calls in the reply: id, name, raw arguments"
    )
    finish_reason: str = "stop"
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    estimated: bool = False
    tokens_unknown: bool = False
    latency_s: float = Field(0.0, ge=0, allow_inf_nan=False)
    cached: bool = False
    cost_usd: float = Field(0.0, ge=0, allow_inf_nan=False)


class ViolationPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str
    raw: str


class EndPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: str = Field(description="the episode's outcome, as its record says")
    reason: str
    dialogue_outcome: str | None = Field(
        None, description="how the dialogue itself ended, when scoring changed the outcome"
    )
    dialogue_reason: str | None = None


class ExtraPayload(BaseModel):
    model_config = ConfigDict(extra="allow")


EventPayload = (
    MessagePayload
    | ToolCallPayload
    | ToolResultPayload
    | ModelCallPayload
    | ViolationPayload
    | EndPayload
    | ExtraPayload
)
"""The union of what an event's ``data`` can be, one member per :data:`EventType`."""

PAYLOADS: dict[EventType, type[BaseModel]] = {
    "message": MessagePayload,
    "tool_call": ToolCallPayload,
    "tool_result": ToolResultPayload,
    "model_call": ModelCallPayload,
    "violation": ViolationPayload,
    "end": EndPayload,
    "extra": ExtraPayload,
}


class _QuickCheck:
    """A payload model's plain-text fields, checked in Python: reading a transcript checks
    every event, and most payloads are a few strings. :meth:`fits` says only "certainly
    valid"; anything else (a model with other fields, a non-``str`` value) goes to the model,
    which accepts or refuses it exactly as before."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.required: list[str] = []
        self.optional: list[str] = []
        self.nullable: list[str] = []
        self.names = frozenset(model.model_fields)
        self.forbid = model.model_config.get("extra") == "forbid"
        self.usable = not model.model_config.get("strict")
        for name, info in model.model_fields.items():
            if info.metadata or info.alias or info.validation_alias:
                self.usable = False
            elif info.annotation is str:
                (self.required if info.is_required() else self.optional).append(name)
            elif info.annotation == str | None and not info.is_required():
                self.nullable.append(name)
            else:
                self.usable = False

    def fits(self, data: dict[str, Any]) -> bool:
        if not self.usable:
            return False
        for name in self.required:
            if type(data.get(name)) is not str:
                return False
        for name in self.optional:
            if name in data and type(data[name]) is not str:
                return False
        for name in self.nullable:
            value = data.get(name)
            if value is not None and type(value) is not str:
                return False
        return not self.forbid or self.names.issuperset(data)


_QUICK: dict[EventType, _QuickCheck] = {kind: _QuickCheck(m) for kind, m in PAYLOADS.items()}
"""Read-only after import: one quick check per payload type."""


class Event(BaseModel):
    """One thing that happened in an episode; ``data`` is checked against ``type``."""

    model_config = ConfigDict(extra="forbid")

    t: float = Field(description="seconds since the episode started (timing: may differ)")
    kind: str = Field(
        description="what happened, in the benchmark's own words (a benchmark names its kinds)"
    )
    type: EventType = Field(
        description="which payload ``data`` holds (derived from ``kind`` in older records)"
    )
    actor: str = Field(description="who caused it: user, system, game_master, or a module name")
    turn: int = Field(description="user turn number (1-based) the event belongs to")
    data: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _type_from_kind(cls, value: Any) -> Any:
        """Records of todeval 0.2.0 and older name no type: derive it (the module's rule)."""
        if isinstance(value, dict) and "type" not in value and isinstance(value.get("kind"), str):
            return {**value, "type": type_of_kind(value["kind"])}
        return value

    @model_validator(mode="after")
    def _payload_fits(self) -> Event:
        if not _QUICK[self.type].fits(self.data):  # else the payload's model decides
            PAYLOADS[self.type].__pydantic_validator__.validate_python(self.data)
        return self

    def payload(self) -> EventPayload:
        """``data`` as its typed model."""
        found = PAYLOADS[self.type].model_validate(self.data)
        assert isinstance(found, EventPayload)
        return found
