"""The SQLite response cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.backends.backend_helpers import FOLLOWUP_TOOL, user_request
from todeval.backends import (
    CachingBackend,
    GenerationRequest,
    ModelInfo,
    ResponseCache,
    ScriptedBackend,
    ScriptedReply,
    cache_key,
)

INFO = ModelInfo(
    name="m",
    spec="openai:m@http://127.0.0.1:9/v1",
    backend="openai",
    model="m",
    parameters=1000,
    price_in_per_1m=1.0,
    price_out_per_1m=1.0,
)


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, request: GenerationRequest) -> ScriptedReply:
        self.calls += 1
        await asyncio.sleep(0.01)
        return ScriptedReply.model_validate(
            {
                "text": f"reply {self.calls}",
                "usage": {"prompt_tokens": 100, "completion_tokens": 20},
                "tool_calls": [{"name": "followup", "arguments": {"message": "x"}}],
            }
        )


def _backend(tmp_path: Path) -> tuple[CachingBackend, Counting]:
    counting = Counting()
    cache = ResponseCache(tmp_path / "cache.sqlite")
    return CachingBackend(ScriptedBackend(INFO, counting), cache), counting


def test_hit_is_marked_cached_with_original_tokens_and_cost(tmp_path: Path) -> None:
    backend, counting = _backend(tmp_path)

    async def run() -> None:
        first = await backend.generate(user_request(), role="system")
        second = await backend.generate(user_request(), role="user")
        assert counting.calls == 1
        assert not first.usage.cached and first.usage.cost_usd > 0
        assert second.usage.cached and second.usage.role == "user"
        assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (100, 20)
        assert second.usage.latency_s == 0
        assert (second.usage.cost_usd, second.usage.flops) == (
            first.usage.cost_usd,
            first.usage.flops,
        )
        assert (second.text, second.tool_calls) == (first.text, first.tool_calls)

    asyncio.run(run())


def test_cache_persists_across_processes_worth_of_instances(tmp_path: Path) -> None:
    backend, _ = _backend(tmp_path)
    asyncio.run(backend.generate(user_request(), role="s"))
    backend.cache.close()
    again, counting = _backend(tmp_path)
    assert asyncio.run(again.generate(user_request(), role="s")).usage.cached
    assert counting.calls == 0
    assert len(again.cache) == 1


def test_only_deterministic_calls_are_cached(tmp_path: Path) -> None:
    backend, counting = _backend(tmp_path)

    async def run() -> None:
        for _ in range(2):
            await backend.generate(user_request(temperature=0.7), role="s")

    asyncio.run(run())
    assert counting.calls == 2
    assert len(backend.cache) == 0


def test_key_covers_everything_that_changes_the_reply() -> None:
    base = user_request()
    variants = [
        user_request("other"),
        user_request(seed=1),
        user_request(tools=[FOLLOWUP_TOOL]),
        user_request(response_schema={"type": "object"}),
        user_request(max_tokens=5),
        user_request(constrained=True),
        user_request(extra={"top_p": 0.5}),
    ]
    keys = {cache_key(INFO, base)} | {cache_key(INFO, v) for v in variants}
    assert len(keys) == len(variants) + 1
    other_model = INFO.model_copy(update={"spec": "openai:n@http://127.0.0.1:9/v1", "model": "n"})
    assert cache_key(other_model, base) != cache_key(INFO, base)
    assert cache_key(INFO, base) == cache_key(INFO, user_request())


def test_concurrent_identical_calls_reach_the_model_once(tmp_path: Path) -> None:
    backend, counting = _backend(tmp_path)

    async def run() -> list[bool]:
        results = await asyncio.gather(
            *(backend.generate(user_request(f"q{i % 4}"), role="s") for i in range(200))
        )
        return [r.usage.cached for r in results]

    cached = asyncio.run(run())
    assert counting.calls == 4
    assert cached.count(False) == 4
    assert len(backend.cache) == 4


def test_failed_leader_lets_a_waiter_call_again(tmp_path: Path) -> None:
    calls = 0

    async def flaky(request: GenerationRequest) -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        if calls == 1:
            raise RuntimeError("first call fails")
        return "fine"

    backend = CachingBackend(ScriptedBackend(INFO, flaky), ResponseCache(tmp_path / "c.sqlite"))

    async def run() -> list[object]:
        return await asyncio.gather(
            *(backend.generate(user_request(), role="s") for _ in range(3)),
            return_exceptions=True,
        )

    results = asyncio.run(run())
    assert isinstance(results[0], RuntimeError)
    assert [getattr(r, "text", None) for r in results[1:]] == ["fine", "fine"]
    assert calls == 2
