"""The model layer's data types and the :class:`Backend` protocol.

Every LLM player talks to a model through :class:`Backend.generate`: chat messages, optional
function tools (OpenAI format) and an optional response schema in; text, tool calls and the
call's accounting (:class:`todeval.core.records.CallUsage`) out.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from todeval.core.records import CallUsage

Role = Literal["system", "user", "assistant", "tool"]
BackendKind = Literal["openai", "llamacpp", "scripted"]
ToolMode = Literal["native", "text"]
SchemaMode = Literal["json_schema", "json_object", "guided_json", "none"]
ToolChoice = Literal["auto", "none", "required"] | dict[str, Any]

# Limits of every number a models file (and so a ModelInfo) may hold: finite and in range.
MAX_PRICE_PER_1M = 10_000.0
"""USD per 1M tokens; the dearest listed model costs well under 1% of this."""
MAX_TIMEOUT_S = 3600.0
"""Per-attempt timeout; a larger (or infinite) one would let a trickling server hold a run."""
MAX_PARAMETERS = 10**15
MAX_CONTEXT_SIZE = 10**8
MAX_CONNECTION_LIMIT = 1024
DEFAULT_RETRY_WAIT_S = 60.0
"""What one call may wait in all between its attempts (backoffs and Retry-After) by default: a
run whose endpoint answers only 429 ends within minutes, not hours."""
MAX_RETRY_WAIT_S = 86_400.0
"""The largest total wait per call a models file (or ``--max-retry-wait``) may ask for."""


class ToolCallOut(BaseModel):
    """One tool call made by the model; ``arguments`` is the raw JSON text it produced."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = Field(description="raw JSON text as produced (may be invalid JSON)")


class ChatMessage(BaseModel):
    """One chat message in OpenAI's shape."""

    role: Role
    content: str | None = None
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    tool_call_id: str | None = Field(None, description="for role 'tool': the call answered")
    name: str | None = Field(None, description="for role 'tool': the tool's name (optional)")


class GenerationRequest(BaseModel):
    """One model call.

    ``tools`` are OpenAI function tools (``{"type": "function", "function": {...}}``).
    ``response_schema`` asks for a JSON reply matching the schema, enforced by the backend where
    it can (JSON-schema response format, llama.cpp grammar). ``constrained`` asks the backend to
    force the reply to be a valid call of one of ``tools`` (grammar, ``tool_choice='required'``).
    ``extra`` holds further generation arguments passed through (``top_p``, ``stop``, ...).
    """

    messages: list[ChatMessage]
    tools: list[dict[str, Any]] | None = None
    tool_choice: ToolChoice | None = None
    response_schema: dict[str, Any] | None = None
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


MAX_REPLY_CHARS = 100_000
"""Longest reply text (and tool-call arguments) kept from a model: the rest is cut and the
reply marked ``finish_reason = "length"``, as a ``max_tokens`` cut is, so a 2 MB reply is the
model's malformed output (a format violation where a format is asked for), never an error of
ours."""


class GenerationResult(BaseModel):
    """The model's reply and the call's accounting."""

    text: str = ""
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    finish_reason: str = "stop"
    usage: CallUsage

    def capped(self, limit: int = MAX_REPLY_CHARS) -> GenerationResult:
        """This reply with text and arguments cut to ``limit`` characters (see
        :data:`MAX_REPLY_CHARS`)."""
        long_calls = any(len(c.arguments) > limit for c in self.tool_calls)
        if len(self.text) <= limit and not long_calls:
            return self
        calls = [c.model_copy(update={"arguments": c.arguments[:limit]}) for c in self.tool_calls]
        return self.model_copy(
            update={"text": self.text[:limit], "tool_calls": calls, "finish_reason": "length"}
        )


class ModelInfo(BaseModel):
    """What is known about a model endpoint. Never holds a secret: only the key's variable name."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    name: str = Field(description="the models-file name, or the spec string")
    spec: str = Field(description="backend:model[@base_url]; contains no secret")
    backend: BackendKind
    model: str = Field(description="model name sent to the server / file name of the GGUF")
    base_url: str | None = None
    parameters: int | None = Field(
        None, gt=0, le=MAX_PARAMETERS, description="parameter count, for FLOPs"
    )
    context_size: int | None = Field(None, gt=0, le=MAX_CONTEXT_SIZE)
    price_in_per_1m: float = Field(
        0.0, ge=0, le=MAX_PRICE_PER_1M, description="USD per 1M prompt tokens"
    )
    price_out_per_1m: float = Field(
        0.0, ge=0, le=MAX_PRICE_PER_1M, description="USD per 1M completion tokens"
    )
    connection_limit: int = Field(
        8, ge=1, le=MAX_CONNECTION_LIMIT, description="max concurrent calls to the endpoint"
    )
    api_key_env: str | None = Field(None, description="NAME of the variable holding the key")
    generation: dict[str, Any] = Field(
        default_factory=dict, description="default generation args (request values win)"
    )
    tool_mode: ToolMode = Field("native", description="native tools= or the text protocol")
    schema_mode: SchemaMode = Field(
        "json_schema", description="how the server is asked for schema-constrained output"
    )
    timeout_s: float = Field(120.0, gt=0, le=MAX_TIMEOUT_S, description="per-attempt timeout")
    max_retry_wait_s: float = Field(
        DEFAULT_RETRY_WAIT_S,
        ge=0,
        le=MAX_RETRY_WAIT_S,
        description="total wait of one call between its attempts (backoffs and Retry-After)",
    )

    @property
    def endpoint(self) -> str:
        """Key of the connection limit: the base URL, or the backend and model."""
        return self.base_url or f"{self.backend}:{self.model}"


@runtime_checkable
class Backend(Protocol):
    """A model behind one async call. Implementations must be safe for concurrent calls."""

    @property
    def info(self) -> ModelInfo: ...

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        """Run one call; ``role`` (user, system, system.intent, ...) goes into the usage."""
        ...

    async def aclose(self) -> None:
        """Release connections, threads and files."""
        ...
