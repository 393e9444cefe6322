"""Generation settings of a run's calls, and the one accounted model call every player makes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from todeval.backends.types import Backend, ChatMessage, GenerationRequest, GenerationResult
from todeval.core.records import CallUsage, ModelCall

_MESSAGES = TypeAdapter(list[ChatMessage])
"""The messages of a call as the record keeps them, dumped in one pass (a quarter of the CPU of
one ``model_dump`` a message: the whole history is dumped with every call)."""


@dataclass(frozen=True)
class Sampling:
    """Generation settings shared by every call of one player."""

    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None

    def request(
        self,
        messages: list[ChatMessage],
        *,
        seed: int | None,
        tools: list[dict[str, Any]] | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> GenerationRequest:
        """A request; with ``constrained`` the backend enforces the tools or ``schema``.

        Without ``constrained`` the schema is not sent (the prompt describes the format), so
        format adherence is measured. ``max_tokens`` is the player's default when the run sets
        none.
        """
        return GenerationRequest(
            messages=messages,
            tools=tools,
            response_schema=schema if self.constrained else None,
            constrained=self.constrained and tools is not None,
            temperature=self.temperature,
            max_tokens=self.max_tokens if self.max_tokens is not None else max_tokens,
            seed=seed,
        )


async def generate_accounted(
    backend: Backend, request: GenerationRequest, *, role: str, usage: list[CallUsage]
) -> GenerationResult:
    """One model call; its accounting, stamped with ``role``, is appended to ``usage``.

    What is appended (and is the result's ``usage``) is a
    :class:`~todeval.core.records.ModelCall`: the accounting with the messages sent and the raw
    reply, which an episode's log records as a ``model_call`` event.
    Infrastructure errors of the backend propagate; a bad reply is returned as it is.
    """
    result = await backend.generate(request, role=role)
    call = ModelCall(
        **{**result.usage.model_dump(), "role": role},
        messages=_MESSAGES.dump_python(
            request.messages, exclude_none=True, exclude_defaults=True, serialize_as_any=True
        ),
        reply=result.text,
        tool_calls=[c.model_dump() for c in result.tool_calls],
        finish_reason=result.finish_reason,
    )
    usage.append(call)
    return result.model_copy(update={"usage": call})
