"""Token, dollar and FLOP accounting of a call."""

from __future__ import annotations

import asyncio

import pytest

from tests.backends.backend_helpers import user_request
from todeval.backends import (
    ModelInfo,
    Script,
    ScriptedBackend,
    call_flops,
    estimate_tokens,
    flop_cost_usd,
    token_cost_usd,
)
from todeval.backends.accounting import cached_usage, make_usage

INFO = ModelInfo(
    name="gpt-4o",
    spec="openai:gpt-4o",
    backend="openai",
    model="gpt-4o",
    parameters=8_000_000_000,
    price_in_per_1m=2.50,
    price_out_per_1m=10.00,
)


def test_token_cost_uses_per_million_prices() -> None:
    assert token_cost_usd(INFO, 1_000_000, 0) == pytest.approx(2.50)
    assert token_cost_usd(INFO, 2000, 500) == pytest.approx(0.005 + 0.005)


def test_flops_are_two_times_parameters_times_tokens() -> None:
    assert call_flops(INFO, 100, 25) == 2 * 8e9 * 125
    unknown = INFO.model_copy(update={"parameters": None})
    assert call_flops(unknown, 100, 25) == 0.0


def test_flop_cost_is_five_cents_per_petaflop() -> None:
    assert flop_cost_usd(1e15) == pytest.approx(0.05)
    assert flop_cost_usd(2 * 8e9 * 125) == pytest.approx(2e12 / 1e15 * 0.05)


def test_estimate_is_chars_over_four_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_usage_record_and_cache_hit() -> None:
    usage = make_usage(INFO, role="system", prompt_tokens=10, completion_tokens=4, latency_s=0.7)
    assert usage.model == "gpt-4o"
    assert usage.cost_usd == pytest.approx(10 * 2.5e-6 + 4 * 10e-6)
    assert usage.flops == 2 * 8e9 * 14
    hit = cached_usage(usage, role="user")
    assert (hit.role, hit.cached, hit.prompt_tokens, hit.completion_tokens) == ("user", True, 10, 4)
    assert hit.latency_s == 0.0
    assert (hit.cost_usd, hit.flops) == (usage.cost_usd, usage.flops)


def test_server_counts_are_used_and_missing_ones_estimated() -> None:
    script = Script.model_validate(
        {
            "replies": [
                {"text": "abcdefgh", "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
                {"text": "abcdefgh"},
            ]
        }
    )
    info = INFO.model_copy(update={"backend": "scripted"})
    backend = ScriptedBackend(info, script)
    first = asyncio.run(backend.generate(user_request("x" * 40), role="user"))
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (7, 3)
    assert not first.usage.estimated
    request = user_request("x" * 40)
    request.messages.append(request.messages[0].model_copy(update={"role": "assistant"}))
    second = asyncio.run(backend.generate(request, role="user"))
    assert second.usage.estimated
    assert second.usage.completion_tokens == 2  # "abcdefgh" = 8 chars
    assert second.usage.prompt_tokens == estimate_tokens("x" * 40 + "\n" + "x" * 40)
    assert second.usage.cost_usd > 0
