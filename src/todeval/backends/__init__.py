"""The model layer shared by every LLM player.

Build a backend with :func:`make_backend` from a spec string (``openai:<model>@<url>``,
``llamacpp:smollm2``, ``scripted:<file>``) or a models-file name, then call
``await backend.generate(GenerationRequest(...), role="system")``. See ``docs/backends.md``.
"""

from todeval.backends.accounting import (
    call_flops,
    estimate_tokens,
    flop_cost_usd,
    token_cost_usd,
)
from todeval.backends.cache import CachingBackend, ResponseCache, cache_key, default_cache_path
from todeval.backends.errors import InfrastructureError, TransientError
from todeval.backends.factory import make_backend, model_info
from todeval.backends.retry import (
    AdaptiveLimiter,
    Clock,
    LimiterPool,
    RetryingBackend,
    RetryPolicy,
    SystemClock,
)
from todeval.backends.scripted import Script, ScriptedBackend, ScriptedReply, load_script
from todeval.backends.spec import ModelEntry, ParsedSpec, load_models_file, parse_model_spec
from todeval.backends.text_tools import limit_string_lengths, parse_tool_reply, tool_call_schema
from todeval.backends.types import (
    Backend,
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    ModelInfo,
    ToolCallOut,
)
from todeval.core.prices import USD_PER_PETAFLOP

__all__ = [
    "USD_PER_PETAFLOP",
    "AdaptiveLimiter",
    "Backend",
    "CachingBackend",
    "ChatMessage",
    "Clock",
    "GenerationRequest",
    "GenerationResult",
    "InfrastructureError",
    "LimiterPool",
    "ModelEntry",
    "ModelInfo",
    "ParsedSpec",
    "ResponseCache",
    "RetryPolicy",
    "RetryingBackend",
    "Script",
    "ScriptedBackend",
    "ScriptedReply",
    "SystemClock",
    "ToolCallOut",
    "TransientError",
    "cache_key",
    "call_flops",
    "default_cache_path",
    "estimate_tokens",
    "flop_cost_usd",
    "limit_string_lengths",
    "load_models_file",
    "load_script",
    "make_backend",
    "model_info",
    "parse_model_spec",
    "parse_tool_reply",
    "token_cost_usd",
    "tool_call_schema",
]
