"""Shared plumbing of the LLM systems: generation settings, accounted model calls, chat history.

* :class:`Generation` turns :class:`PlayerOptions` into :class:`GenerationRequest` s.
* :func:`generate` makes one model call and appends its :class:`CallUsage` (with the role set)
  to the caller's list, which the system returns in :attr:`SystemOutput.usage`.
* :class:`ToolChat` is an OpenAI-shaped chat history for tool-calling agents: every
  observation is appended so that each tool call is answered by a tool message before the
  dialogue goes on, as chat APIs require.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from todeval.backends.types import (
    Backend,
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    ToolCallOut,
)
from todeval.benchmarks.booking.protocol import (
    BookingResult,
    DbResult,
    Observation,
    PlayerOptions,
    SystemOutput,
    ToolCall,
    UserMessage,
)
from todeval.core.records import CallUsage
from todeval.errors import UsageError

MAIN_ROLE = "system"


def compact_json(value: Any) -> str:
    """JSON without spaces (what the models see of rows and results)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def require_model(options: PlayerOptions, system: str) -> Backend:
    """The main model of ``system``; a one-line usage error when none was configured."""
    if options.model is None:
        raise UsageError(f"the {system} system needs a model: pass --system-model SPEC")
    return options.model


def module_model(options: PlayerOptions, system: str) -> Backend:
    """The model of the sub-modules: ``options.module_model``, else the main model."""
    return options.module_model or require_model(options, system)


@dataclass(frozen=True)
class Generation:
    """Generation settings shared by every call of one system."""

    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None

    @classmethod
    def from_options(cls, options: PlayerOptions) -> Generation:
        return cls(options.constrained, options.temperature, options.max_tokens)

    def request(
        self,
        messages: list[ChatMessage],
        *,
        seed: int,
        tools: list[dict[str, Any]] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> GenerationRequest:
        """A request; with ``constrained`` the backend enforces the tools or ``schema``.

        Without ``constrained`` the schema is not sent (the prompt describes the format), so
        format adherence is measured as in the paper.
        """
        return GenerationRequest(
            messages=messages,
            tools=tools,
            response_schema=schema if self.constrained else None,
            constrained=self.constrained and tools is not None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
        )


async def generate(
    backend: Backend, request: GenerationRequest, *, role: str, usage: list[CallUsage]
) -> GenerationResult:
    """One model call; its accounting (role set to ``role``) is appended to ``usage``.

    Infrastructure errors of the backend propagate; a bad reply is returned as is.
    """
    result = await backend.generate(request, role=role)
    call = (
        result.usage
        if result.usage.role == role
        else result.usage.model_copy(update={"role": role})
    )
    usage.append(call)
    return result


def result_content(observation: DbResult | BookingResult) -> str:
    """A DB or booking result as the compact JSON a model reads."""
    if isinstance(observation, DbResult):
        return compact_json(
            {"total": observation.total, "rows": observation.rows, "message": observation.message}
        )
    return compact_json(
        {"ok": observation.ok, "reference": observation.reference, "message": observation.message}
    )


def output_for(call: ToolCallOut | None, text: str, usage: list[CallUsage]) -> SystemOutput:
    """The system output for a model reply: its first tool call (raw arguments) or its text."""
    if call is None:
        return SystemOutput(text=text, usage=usage)
    return SystemOutput(
        tool_call=ToolCall(name=call.name, arguments=call.arguments),
        text=text or None,
        usage=usage,
    )


class ToolChat:
    """The chat history of one tool-calling agent.

    Only the first tool call of a reply is kept (it is the one acted on), so every call in the
    history is answered by exactly one tool message.
    """

    DELIVERED = "The message was sent to the user."

    def __init__(self, system_prompt: str) -> None:
        self.messages: list[ChatMessage] = [ChatMessage(role="system", content=system_prompt)]
        self.open_call: ToolCallOut | None = None
        self._ids: set[str] = set()

    def answer(self, content: str) -> None:
        """Answer the open tool call; without one, tell the model as a user message."""
        if self.open_call is None:
            self.messages.append(ChatMessage(role="user", content=content))
            return
        self.messages.append(
            ChatMessage(
                role="tool",
                content=content,
                tool_call_id=self.open_call.id,
                name=self.open_call.name,
            )
        )
        self.open_call = None

    def observe(self, observation: Observation) -> None:
        """Append one observation of the game master."""
        if isinstance(observation, UserMessage):
            if self.open_call is not None:
                self.answer(self.DELIVERED)
            self.messages.append(ChatMessage(role="user", content=observation.text))
        elif isinstance(observation, DbResult | BookingResult):
            self.answer(result_content(observation))
        else:
            self.answer(
                f"Your last reply was not a valid action ({observation.reason}). "
                "Reply with exactly one valid tool call."
            )

    def record(self, result: GenerationResult) -> ToolCallOut | None:
        """Append the model's reply; returns its first tool call (now the open call), if any."""
        call = result.tool_calls[0] if result.tool_calls else None
        if call is not None and (not call.id or call.id in self._ids):
            # ids must pair calls with results: replace missing or repeated ones
            call = call.model_copy(update={"id": f"{call.id or 'call'}_{len(self._ids)}"})
        if call is not None:
            self._ids.add(call.id)
        self.messages.append(
            ChatMessage(
                role="assistant",
                content=result.text if call is None else (result.text or None),
                tool_calls=[call] if call is not None else [],
            )
        )
        self.open_call = call
        return call
