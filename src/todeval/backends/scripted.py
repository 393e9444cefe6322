"""``scripted`` backend: deterministic replies from a file or a Python callable.

A script is a :class:`Script`: ``rules`` (a regex searched in the last message's content picks a
reply; with ``expand`` the reply's text may quote the match's groups) and ``replies`` (the n-th
call of one conversation -- n = number of assistant messages already in it -- gets
``replies[n]``; past the end, ``default`` or the list again from the start). Choosing by
conversation position, not by a global counter, keeps replies identical however many
conversations run concurrently.

Files: JSON (a :class:`Script` object, or a list of replies) or JSONL (one reply a line). A
reply is a string (plain text) or a :class:`ScriptedReply`. The same script drives the test
server :mod:`todeval.testing.openai_server`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from todeval.backends.accounting import usage_or_estimate
from todeval.backends.types import (
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    ModelInfo,
    ToolCallOut,
)
from todeval.core import safejson
from todeval.errors import BadInputError


class ScriptedToolCall(BaseModel):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict, description="object or raw")
    id: str | None = None


class ScriptedUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int


class ScriptedReply(BaseModel):
    """One scripted model reply. ``raw_body``/``omit_usage``/``latency_ms``: test server only."""

    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: ScriptedUsage | None = Field(None, description="counts to report; none: estimate")
    omit_usage: bool = Field(False, description="server: send no usage field at all")
    raw_body: str | None = Field(None, description="server: send this body verbatim")
    latency_ms: float = Field(0.0, ge=0, description="server: extra delay for this reply")

    def tool_calls_out(self, prefix: str) -> list[ToolCallOut]:
        return [
            ToolCallOut(
                id=c.id or f"{prefix}_{i}",
                name=c.name,
                arguments=c.arguments
                if isinstance(c.arguments, str)
                else json.dumps(c.arguments, ensure_ascii=False),
            )
            for i, c in enumerate(self.tool_calls)
        ]

    @property
    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


def _as_reply(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


class ScriptRule(BaseModel):
    match: str = Field(description="regex searched in the content of the last message")
    reply: ScriptedReply
    expand: bool = Field(
        False, description="fill the reply text's group references (\\1, \\g<name>) from the match"
    )

    @field_validator("reply", mode="before")
    @classmethod
    def _text_reply(cls, value: Any) -> Any:
        return _as_reply(value)


class Script(BaseModel):
    rules: list[ScriptRule] = Field(default_factory=list)
    replies: list[ScriptedReply] = Field(default_factory=list)
    default: ScriptedReply | None = None

    @field_validator("replies", mode="before")
    @classmethod
    def _text_replies(cls, value: Any) -> Any:
        return [_as_reply(v) for v in value] if isinstance(value, list) else value

    @field_validator("default", mode="before")
    @classmethod
    def _text_default(cls, value: Any) -> Any:
        return _as_reply(value)

    def select(self, messages: list[ChatMessage]) -> ScriptedReply:
        """The reply for a conversation; deterministic in the messages alone."""
        last = (messages[-1].content or "") if messages else ""
        for rule in self.rules:
            found = re.search(rule.match, last, re.DOTALL)
            if found:
                if rule.expand:
                    return rule.reply.model_copy(update={"text": found.expand(rule.reply.text)})
                return rule.reply
        position = sum(1 for m in messages if m.role == "assistant")
        if position < len(self.replies):
            return self.replies[position]
        if self.default is not None:
            return self.default
        if self.replies:
            return self.replies[position % len(self.replies)]
        return ScriptedReply(text="ok")


def load_script(path: str | Path) -> Script:
    """Read a script file (JSON object or list, or JSONL); :class:`BadInputError` if invalid."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot read script {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix == ".jsonl":
            replies = [safejson.loads(line) for line in text.splitlines() if line.strip()]
            return Script.model_validate({"replies": replies})
        data = safejson.loads(text)
        if isinstance(data, list):
            data = {"replies": data}
        return Script.model_validate(data)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInputError(f"{path}: invalid script at {where}: {first['msg']}") from None


ReplyFunction = Callable[[GenerationRequest], ScriptedReply | str | Awaitable[ScriptedReply | str]]


class ScriptedBackend:
    """Replies from a :class:`Script` or a callable ``request -> ScriptedReply | str``."""

    def __init__(self, info: ModelInfo, source: Script | ReplyFunction) -> None:
        self._info = info
        self._source = source

    @property
    def info(self) -> ModelInfo:
        return self._info

    def __repr__(self) -> str:
        return f"ScriptedBackend({self._info.spec!r})"

    async def _reply(self, request: GenerationRequest) -> ScriptedReply:
        if isinstance(self._source, Script):
            return self._source.select(request.messages)
        value = self._source(request)
        if asyncio.iscoroutine(value) or isinstance(value, Awaitable):
            value = await value
        if isinstance(value, str):
            return ScriptedReply(text=value)
        return value

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        started = time.perf_counter()
        reply = await self._reply(request)
        position = sum(1 for m in request.messages if m.role == "assistant")
        calls = reply.tool_calls_out(f"call_{position}")
        usage = reply.usage
        return GenerationResult(
            text=reply.text,
            tool_calls=calls,
            finish_reason=reply.finish,
            usage=usage_or_estimate(
                self._info,
                role=role,
                request=request,
                reply_text=reply.text + "".join(c.arguments for c in calls),
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
                latency_s=time.perf_counter() - started,
            ),
        )

    async def aclose(self) -> None:
        return None
