"""Shared helpers for the LLM-system tests (no tests here).

The systems are driven through the real game master (``play_episode``) with scripted models
(:class:`todeval.backends.scripted.ScriptedBackend`) and the scripted user.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from todeval.backends.scripted import (
    ScriptedBackend,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedUsage,
)
from todeval.backends.types import Backend, ChatMessage, GenerationRequest, ModelInfo
from todeval.benchmarks.booking.game import GameRules, play_episode
from todeval.benchmarks.booking.messages import SystemContext
from todeval.benchmarks.booking.schema import tool_definitions
from todeval.benchmarks.booking.tasks import BookingTask, load_tasks
from todeval.core.records import EpisodeRecord
from todeval.dialogue.participants import PlayerOptions

from .scripted import ScriptedUser

TASK: BookingTask = load_tasks("test")[0]  # hotel: city centre north b and b, 1 person, 5 nights
USER_LINES = [
    "I am looking for a hotel called city centre north b and b.",
    "Please book it for 1 person for 5 nights starting from friday.",
]
HOTEL_ROW = {
    "area": "north",
    "pricerange": "cheap",
    "type": "guesthouse",
    "internet": "yes",
    "parking": "yes",
    "name": "city centre north b and b",
    "stars": "0",
}
BOOKING = {
    **HOTEL_ROW,
    "people": "1",
    "day": "friday",
    "stay": "5",
    "phone": "01223312843",
    "postcode": "cb43ht",
    "address": "328a histon road",
}


def model_info(name: str = "scripted-test") -> ModelInfo:
    return ModelInfo(name=name, spec=f"scripted:{name}", backend="scripted", model=name)


class Recorder:
    """A scripted model that records every request it gets."""

    def __init__(
        self, reply: Callable[[GenerationRequest], ScriptedReply | str], name: str = "model"
    ) -> None:
        self.reply = reply
        self.requests: list[GenerationRequest] = []
        self.backend = ScriptedBackend(model_info(name), self._call)

    def _call(self, request: GenerationRequest) -> ScriptedReply | str:
        self.requests.append(request)
        return self.reply(request)


def sequence(replies: Sequence[ScriptedReply | str]) -> Callable[[GenerationRequest], Any]:
    """Replies by conversation position (number of assistant messages); last one repeats."""

    def reply(request: GenerationRequest) -> ScriptedReply | str:
        position = sum(1 for m in request.messages if m.role == "assistant")
        return replies[min(position, len(replies) - 1)]

    return reply


def tool(name: str, arguments: dict[str, Any] | str, *, text: str = "") -> ScriptedReply:
    return ScriptedReply(
        text=text,
        tool_calls=[ScriptedToolCall(name=name, arguments=arguments)],
        usage=ScriptedUsage(prompt_tokens=100, completion_tokens=10),
    )


def text(content: str) -> ScriptedReply:
    return ScriptedReply(text=content, usage=ScriptedUsage(prompt_tokens=50, completion_tokens=5))


def as_json(value: dict[str, Any]) -> ScriptedReply:
    return text(json.dumps(value))


def options(
    model: Backend | None,
    module_model: Backend | None = None,
    *,
    constrained: bool = False,
    **extra: Any,
) -> PlayerOptions:
    return PlayerOptions(
        role="system",
        model=model,
        module_model=module_model,
        constrained=constrained,
        max_tokens=200,
        extra=extra,
    )


def play(
    system: Any,
    lines: list[str] | None = None,
    *,
    rules: GameRules | None = None,
    task: BookingTask = TASK,
) -> EpisodeRecord:
    user = ScriptedUser(list(USER_LINES if lines is None else lines))
    rules = rules or GameRules(protocol="strict")  # the LLM-system tests pin the strict rules
    return asyncio.run(play_episode(task, system, user, run_seed=0, rules=rules))


def context(task_set: str = "test") -> SystemContext:
    return SystemContext(
        task_set=task_set, tools=tool_definitions(task_set), rng=random.Random(0), seed=1
    )


def events(record: EpisodeRecord, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in record.events if e.kind == kind]


def assert_well_formed_history(messages: list[ChatMessage]) -> None:
    """Every tool call is answered by one tool message right after it, and nothing else is."""
    assert messages[0].role == "system"
    open_call: str | None = None
    for message in messages[1:]:
        if message.role == "tool":
            assert open_call is not None and message.tool_call_id == open_call
            open_call = None
            continue
        assert open_call is None, f"unanswered tool call before a {message.role} message"
        if message.role == "assistant":
            assert len(message.tool_calls) <= 1
            open_call = message.tool_calls[0].id if message.tool_calls else None
