"""Chat helpers for LLM participants of any benchmark.

* :class:`ToolChat` -- an OpenAI-shaped chat history for a tool-calling agent: every tool call
  is answered by exactly one tool message before the dialogue goes on, as chat APIs require.
* :func:`json_reply` -- one accounted model call whose reply must be a JSON object valid
  against a schema; a reply that is not is a *format failure* (reason and raw text kept),
  never an error.
"""

from __future__ import annotations

from typing import Any

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, ChatMessage, GenerationResult, ToolCallOut
from todeval.core.records import CallUsage
from todeval.dialogue.replies import ReplyChecker
from todeval.dialogue.reply import JsonReply


class ToolChat:
    """The chat history of one tool-calling agent.

    By default only the first tool call of a reply is kept (it is the one acted on), so every
    call in the history is answered by exactly one tool message. With ``record(result,
    keep_all=True)`` every call of the reply is kept and answered in order; an answer always
    goes right after the reply's earlier answers, also when a user message came in between
    (a call played after the other side spoke), so the history stays valid for chat APIs.
    """

    DELIVERED = "The message was sent to the user."

    def __init__(self, system_prompt: str) -> None:
        self.messages: list[ChatMessage] = [ChatMessage(role="system", content=system_prompt)]
        self.open_calls: list[ToolCallOut] = []
        self._answer_at = 0  # where the next answer to the open calls goes
        self._ids: set[str] = set()

    @property
    def open_call(self) -> ToolCallOut | None:
        """The call the next :meth:`answer` answers."""
        return self.open_calls[0] if self.open_calls else None

    def answer(self, content: str) -> None:
        """Answer the open tool call; without one, tell the model as a user message."""
        if not self.open_calls:
            self.messages.append(ChatMessage(role="user", content=content))
            return
        call = self.open_calls.pop(0)
        message = ChatMessage(role="tool", content=content, tool_call_id=call.id, name=call.name)
        self.messages.insert(self._answer_at, message)
        self._answer_at += 1

    def user(self, text: str) -> None:
        """A message from the other side (the first open call is first answered as delivered)."""
        if self.open_calls:
            self.answer(self.DELIVERED)
        self.messages.append(ChatMessage(role="user", content=text))

    def _unique(self, call: ToolCallOut) -> ToolCallOut:
        if not call.id or call.id in self._ids:
            # ids must pair calls with results: replace missing or repeated ones
            call = call.model_copy(update={"id": f"{call.id or 'call'}_{len(self._ids)}"})
        self._ids.add(call.id)
        return call

    def record(self, result: GenerationResult, *, keep_all: bool = False) -> ToolCallOut | None:
        """Append the model's reply; returns its first tool call (now the open call), if any.

        ``keep_all`` keeps every call of the reply open, to be answered in order."""
        if keep_all:
            while self.open_calls:  # calls that were never played
                self.answer("Not executed.")
        kept = result.tool_calls if keep_all else result.tool_calls[:1]
        calls = [self._unique(c) for c in kept]
        self.messages.append(
            ChatMessage(
                role="assistant",
                content=result.text if not calls else (result.text or None),
                tool_calls=calls,
            )
        )
        self.open_calls = calls
        self._answer_at = len(self.messages)
        return calls[0] if calls else None


async def json_reply(
    backend: Backend,
    sampling: Sampling,
    messages: list[ChatMessage],
    checker: ReplyChecker,
    *,
    role: str,
    seed: int | None,
    usage: list[CallUsage] | None = None,
) -> JsonReply:
    """One call asking for a JSON object valid against ``checker``'s schema (sent to the backend
    only when ``sampling.constrained``). A tool call where text was asked for counts as its
    arguments' text."""
    calls: list[CallUsage] = [] if usage is None else usage
    request = sampling.request(messages, seed=seed, schema=checker.schema)
    result = await generate_accounted(backend, request, role=role, usage=calls)
    text = result.text
    if not text and result.tool_calls:
        text = result.tool_calls[0].arguments
    checked = checker.check(text)
    return JsonReply(
        value=checked.value,
        format_error=checked.error,
        raw=text,
        finish_reason=result.finish_reason,
        usage=result.usage,
    )


def object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as it is, or for ``{field: type}`` (``int``, ``float``, ``str``, ``bool``) the
    JSON schema of an object with exactly those fields."""
    names = {int: "integer", float: "number", str: "string", bool: "boolean"}
    if not schema or not all(isinstance(v, type) and v in names for v in schema.values()):
        return schema
    return {
        "type": "object",
        "properties": {key: {"type": names[value]} for key, value in schema.items()},
        "required": list(schema),
        "additionalProperties": False,
    }


class JsonChat:
    """A model conversation whose every reply must be a JSON object of one schema: the user
    turns are the benchmark's prompt templates, filled in (``say``); ``ask`` makes one
    accounted call (:func:`json_reply`) and keeps the reply in the history."""

    def __init__(
        self,
        options: Any,
        schema: dict[str, Any],
        *,
        player: str | None = None,
        flag: str | None = None,
    ) -> None:
        """``options`` is the player's :class:`~todeval.dialogue.participants.PlayerOptions`;
        ``schema`` a JSON schema, or ``{field: type}`` for an object of exactly those fields
        (:func:`object_schema`); ``player`` and ``flag`` name the player and the option that
        gives it a model, for the usage error when it has none (default: ``llm ROLE`` and
        ``--ROLE-model``)."""
        role = options.role
        self.model: Backend = options.require_model(
            player or f"llm {role}", flag or f"--{role}-model"
        )
        self.prompts = options.require_prompts()
        self.sampling = Sampling(options.constrained, options.temperature, options.max_tokens)
        self.checker = ReplyChecker(object_schema(schema))
        self.role: str = options.role
        self.messages: list[ChatMessage] = []

    def say(self, template: str, **values: object) -> None:
        """Add the template ``template``, filled with ``values``, as a user turn."""
        text = self.prompts.render(template, **{k: str(v) for k, v in values.items()})
        self.messages.append(ChatMessage(role="user", content=text))

    async def ask(self, *, seed: int | None, usage: list[CallUsage] | None = None) -> JsonReply:
        reply = await json_reply(
            self.model, self.sampling, self.messages, self.checker,
            role=self.role, seed=seed, usage=usage,
        )  # fmt: skip
        self.messages.append(ChatMessage(role="assistant", content=reply.raw))
        return reply
