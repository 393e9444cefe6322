"""Per-call accounting: tokens, dollar cost, FLOPs.

* Token counts come from the server's ``usage``; only when it gives none are they estimated as
  characters / 4 (the original clem:todd estimate) and the call is marked ``estimated``. A
  count that is not a plain integer in 0..:data:`MAX_TOKENS_PER_CALL` (negative, fractional,
  a string, 10^400) is not trusted: the call's usage counts as missing and is estimated, so a
  broken server can neither lower a cost nor crash the accounting.
* Dollar cost = prompt tokens x input price + completion tokens x output price (per 1M).
* FLOPs = 2 x parameters x (prompt + completion tokens); :func:`flop_cost_usd` prices them at
  $0.05 per petaFLOP (the paper's assumption). Unknown parameter count -> 0 FLOPs.
* A cache hit keeps the original token counts, dollars and FLOPs (what the dialogue costs,
  so a summary does not change when a run is repeated from the cache), with zero latency;
  ``cached`` marks it, and summaries count new calls separately.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from todeval.backends.types import GenerationRequest, ModelInfo
from todeval.core.prices import USD_PER_PETAFLOP
from todeval.core.records import CallUsage

CHARS_PER_TOKEN = 4
MAX_TOKENS_PER_CALL = 10**9
"""Largest token count of one call taken from a server (any model's context is far smaller)."""
MAX_USD_PER_CALL = 1e9
"""Cost of one call is clamped here (never reached with a models file's prices in range)."""


def valid_token_count(value: Any) -> bool:
    """A server's token count is trusted only as a plain integer in 0..MAX_TOKENS_PER_CALL."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS_PER_CALL
    )


def _finite(value: float, cap: float) -> float:
    """``value`` clamped to 0..cap; NaN becomes 0 (cost and FLOPs are never non-finite)."""
    if math.isnan(value):
        return 0.0
    return min(max(value, 0.0), cap)


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up (0 for empty text)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def request_text(request: GenerationRequest) -> str:
    """Everything a prompt is made of, as one string, for estimating its tokens."""
    parts: list[str] = []
    for message in request.messages:
        parts.append(message.content or "")
        parts.extend(f"{c.name}{c.arguments}" for c in message.tool_calls)
    if request.tools:
        parts.append(json.dumps(request.tools, separators=(",", ":")))
    if request.response_schema:
        parts.append(json.dumps(request.response_schema, separators=(",", ":")))
    return "\n".join(parts)


def token_cost_usd(info: ModelInfo, prompt_tokens: int, completion_tokens: int) -> float:
    """Dollar cost of one call from the model's per-1M-token prices (finite, 0..1e9)."""
    cost = (prompt_tokens * info.price_in_per_1m + completion_tokens * info.price_out_per_1m) / 1e6
    return _finite(cost, MAX_USD_PER_CALL)


def call_flops(info: ModelInfo, prompt_tokens: int, completion_tokens: int) -> float:
    """2 x parameters x tokens; 0 when the parameter count is unknown."""
    if not info.parameters:
        return 0.0
    return _finite(2.0 * info.parameters * (prompt_tokens + completion_tokens), sys.float_info.max)


def flop_cost_usd(flops: float) -> float:
    """FLOP cost at $0.05 per petaFLOP (1e15 FLOPs)."""
    return flops / 1e15 * USD_PER_PETAFLOP


def make_usage(
    info: ModelInfo,
    *,
    role: str,
    prompt_tokens: int,
    completion_tokens: int,
    latency_s: float,
    estimated: bool = False,
) -> CallUsage:
    """The accounting record of one real (uncached) call."""
    return CallUsage(
        role=role,
        model=info.name,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        estimated=estimated,
        latency_s=latency_s,
        cached=False,
        cost_usd=token_cost_usd(info, prompt_tokens, completion_tokens),
        flops=call_flops(info, prompt_tokens, completion_tokens),
    )


def usage_or_estimate(
    info: ModelInfo,
    *,
    role: str,
    request: GenerationRequest,
    reply_text: str,
    prompt_tokens: Any,
    completion_tokens: Any,
    latency_s: float,
) -> CallUsage:
    """Server counts when both are given and valid (:func:`valid_token_count`), else the
    chars/4 estimate marked ``estimated``."""
    if valid_token_count(prompt_tokens) and valid_token_count(completion_tokens):
        return make_usage(
            info,
            role=role,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency_s,
        )
    return make_usage(
        info,
        role=role,
        prompt_tokens=estimate_tokens(request_text(request)),
        completion_tokens=estimate_tokens(reply_text),
        latency_s=latency_s,
        estimated=True,
    )


def cached_usage(original: CallUsage, *, role: str) -> CallUsage:
    """A cache hit: the original tokens, cost and FLOPs, marked cached, with no latency."""
    return original.model_copy(update={"role": role, "cached": True, "latency_s": 0.0})
