"""Finding 4 of issue 16: token counts from a server are not trusted. Negative, fractional,
absurd (10^400) or non-numeric counts make the call's usage count as missing: it is estimated
(chars / 4) and marked ``estimated``; the episode is scored, its cost is finite and >= 0."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest

from todeval.backends import ModelInfo, Script, make_backend
from todeval.backends.accounting import MAX_TOKENS_PER_CALL, token_cost_usd, valid_token_count
from todeval.backends.scripted import ScriptedReply, ScriptedUsage, ScriptRule
from todeval.backends.spec import ModelEntry
from todeval.backends.types import ChatMessage, GenerationRequest
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess


def _body(usage: Any) -> str:
    message = {"role": "assistant", "content": "hello there"}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [choice],
                       "usage": usage})  # fmt: skip


def _call(base_url: str, content: str) -> Any:
    async def go() -> Any:
        spec = f"openai:scripted@{base_url}"
        entries = {"priced": ModelEntry(spec=spec, price_in_per_1m=2.5, price_out_per_1m=10)}
        backend = make_backend("priced", entries)
        try:
            request = GenerationRequest(messages=[ChatMessage(role="user", content=content)])
            return await backend.generate(request, role="system")
        finally:
            await backend.aclose()

    return asyncio.run(go())


BAD_USAGES: list[Any] = [
    {"prompt_tokens": -1_000_000, "completion_tokens": -5},
    {"prompt_tokens": 10**400, "completion_tokens": 3},
    {"prompt_tokens": MAX_TOKENS_PER_CALL + 1, "completion_tokens": 3},
    {"prompt_tokens": 1.5, "completion_tokens": 3},
    {"prompt_tokens": "12", "completion_tokens": 3},
    {"prompt_tokens": True, "completion_tokens": 3},
    {"prompt_tokens": None, "completion_tokens": 3},
    "lots",
    [1, 2],
]


def test_bad_server_usage_is_estimated_never_negative_or_an_error() -> None:
    usages = [*BAD_USAGES, {"prompt_tokens": 7, "completion_tokens": 2}]
    rules = [
        ScriptRule(match=f"^case {i}$", reply=ScriptedReply(raw_body=_body(usage)))
        for i, usage in enumerate(usages)
    ]
    with ServerProcess(ServerConfig(script=Script(rules=rules))) as server:
        results = [_call(server.base_url, f"case {i}") for i in range(len(usages))]
    for usage_sent, result in zip(BAD_USAGES, results, strict=False):
        usage = result.usage
        assert result.text == "hello there"
        assert usage.estimated, usage_sent
        assert 0 <= usage.prompt_tokens < 100 and 0 <= usage.completion_tokens < 100
        assert math.isfinite(usage.cost_usd) and usage.cost_usd >= 0
    good = results[-1].usage
    assert (good.prompt_tokens, good.completion_tokens, good.estimated) == (7, 2, False)
    assert good.cost_usd == pytest.approx(7 * 2.5e-6 + 2 * 10e-6)


def test_negative_scripted_usage_over_a_booking_episode_is_scored() -> None:
    from tests.booking.test_llm_systems_monolithic import GOOD
    from tests.integrity.test_json_depth import _episode

    replies = [r.model_copy(update={"usage": ScriptedUsage(prompt_tokens=-10**6,
                                                            completion_tokens=-10**6)})
               for r in GOOD]  # fmt: skip
    with ServerProcess(ServerConfig(script=Script(replies=replies))) as server:
        record = asyncio.run(_episode(server.base_url))
    assert record.outcome.value == "success", record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    usage = record.usage["system"]
    assert usage.estimated and usage.prompt_tokens > 0 and usage.cost_usd >= 0


def test_validity_rule_and_cost_is_always_finite() -> None:
    assert valid_token_count(0) and valid_token_count(MAX_TOKENS_PER_CALL)
    for bad in (-1, MAX_TOKENS_PER_CALL + 1, 1.0, "1", True, None):
        assert not valid_token_count(bad)
    # a ModelInfo refuses such prices (finding 5); built unchecked, the cost is still finite
    info = ModelInfo.model_construct(name="m", spec="openai:m", backend="openai", model="m",
                                     price_in_per_1m=1e308, price_out_per_1m=1e308)  # fmt: skip
    assert math.isfinite(token_cost_usd(info, 10**9, 10**9))


def test_http_system_usage_with_bad_counts_is_marked_estimated() -> None:
    from todeval.benchmarks.booking.llm_systems.http_system import output_from_body

    body = json.dumps({"action": {"name": "followup", "arguments": {"message": "hi"}},
                       "usage": {"prompt_tokens": -3, "completion_tokens": 10**400}})  # fmt: skip
    output = output_from_body(body, 0.01)
    assert output.tool_call is not None
    (usage,) = output.usage
    assert usage.estimated and usage.prompt_tokens == 0 and usage.completion_tokens == 0
