"""Retries, timeouts and the adaptive connection limit (fake clock: runs in milliseconds)."""

from __future__ import annotations

import asyncio
import pickle
import random
from typing import Any

import pytest

from tests.backends.backend_helpers import FakeClock, user_request
from todeval.backends import (
    AdaptiveLimiter,
    GenerationRequest,
    GenerationResult,
    InfrastructureError,
    ModelInfo,
    RetryingBackend,
    RetryPolicy,
    TransientError,
)
from todeval.backends.accounting import make_usage
from todeval.errors import InfrastructureError as ProjectInfrastructureError
from todeval.errors import UsageError

INFO = ModelInfo(name="m", spec="scripted:m", backend="scripted", model="m", timeout_s=0.2)


class Flaky:
    """Raises the queued errors one per call, then answers."""

    def __init__(self, errors: list[BaseException], hang_s: float = 0.0) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.hang_s = hang_s
        self.info = INFO

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        if self.hang_s:
            await asyncio.sleep(self.hang_s)
        return GenerationResult(
            text="ok",
            usage=make_usage(INFO, role=role, prompt_tokens=1, completion_tokens=1, latency_s=0),
        )

    async def aclose(self) -> None:
        return None


def _run(backend: Any) -> GenerationResult:
    result: GenerationResult = asyncio.run(backend.generate(user_request(), role="system"))
    return result


def test_transient_errors_are_retried_with_growing_backoff() -> None:
    inner = Flaky([TransientError("boom", kind="server") for _ in range(3)])
    clock = FakeClock()
    policy = RetryPolicy(base_delay_s=1.0, jitter=0.5)
    backend = RetryingBackend(inner, policy=policy, clock=clock, rng=random.Random(1))
    assert _run(backend).text == "ok"
    assert inner.calls == 4
    assert len(clock.sleeps) == 3
    for attempt, delay in enumerate(clock.sleeps, start=1):
        full = 2.0 ** (attempt - 1)
        assert full * 0.5 <= delay <= full


def test_retry_after_is_honoured() -> None:
    inner = Flaky([TransientError("429", kind="rate_limit", retry_after=7.0)])
    clock = FakeClock()
    backend = RetryingBackend(inner, clock=clock)
    assert _run(backend).text == "ok"
    assert clock.sleeps == [7.0]


def test_exhausted_retries_raise_infrastructure_error_with_cause() -> None:
    inner = Flaky([TransientError(f"reset {i}", kind="connection") for i in range(10)])
    clock = FakeClock()
    backend = RetryingBackend(inner, policy=RetryPolicy(max_attempts=3), clock=clock)
    with pytest.raises(InfrastructureError) as info:
        _run(backend)
    assert isinstance(info.value, ProjectInfrastructureError)  # what the game master catches
    assert info.value.cause == "reset 2"
    assert info.value.kind == "connection"
    assert info.value.attempts == 3
    assert "after 3 attempt(s): reset 2" in str(info.value)
    assert inner.calls == 3 and len(clock.sleeps) == 2


def test_non_retryable_failures_give_up_at_once() -> None:
    inner = Flaky([TransientError("400 bad request", kind="client", retryable=False)])
    clock = FakeClock()
    with pytest.raises(InfrastructureError, match="400 bad request"):
        _run(RetryingBackend(inner, clock=clock))
    assert inner.calls == 1 and clock.sleeps == []


def test_other_errors_pass_through_unchanged() -> None:
    inner = Flaky([UsageError("model 'x' refused the API key")])
    with pytest.raises(UsageError, match="refused the API key"):
        _run(RetryingBackend(inner, clock=FakeClock()))
    assert inner.calls == 1


def test_every_attempt_has_a_timeout() -> None:
    inner = Flaky([], hang_s=60.0)
    clock = FakeClock()
    backend = RetryingBackend(
        inner, policy=RetryPolicy(max_attempts=2, timeout_s=0.05), clock=clock
    )
    with pytest.raises(InfrastructureError, match=r"no reply within 0\.05 s") as info:
        _run(backend)
    assert info.value.kind == "timeout"
    assert inner.calls == 2


def test_limiter_bounds_concurrency() -> None:
    async def run() -> int:
        limiter = AdaptiveLimiter(3)
        inner = Flaky([], hang_s=0.01)
        backend = RetryingBackend(inner, limiter=limiter, clock=FakeClock())
        await asyncio.gather(*(backend.generate(user_request(), role="s") for _ in range(20)))
        assert limiter.in_flight == 0
        return limiter.peak_in_flight

    assert asyncio.run(run()) == 3


def test_limiter_halves_once_per_epoch_and_recovers() -> None:
    async def run() -> None:
        limiter = AdaptiveLimiter(8)
        epochs = [await limiter.acquire() for _ in range(8)]
        for epoch in epochs:  # a burst of 429s from calls started together counts once
            limiter.release(epoch, "rate_limited")
        assert limiter.limit == 4 and limiter.decreases == 1
        epoch = await limiter.acquire()
        limiter.release(epoch, "rate_limited")
        assert limiter.limit == 2
        for _ in range(40):
            limiter.release(await limiter.acquire(), "ok")
        assert limiter.limit == 8  # additive increase, capped at the configured limit
        for _ in range(5):
            limiter.release(await limiter.acquire(), "rate_limited")
        assert limiter.limit == 1  # never below one

    asyncio.run(run())


def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    async def run() -> None:
        limiter = AdaptiveLimiter(1)
        held = await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limiter.release(held, "ok")
        assert limiter.in_flight == 0
        limiter.release(await asyncio.wait_for(limiter.acquire(), 1), "ok")

    asyncio.run(run())


def test_infrastructure_error_survives_pickling() -> None:
    error = InfrastructureError("reset by peer", kind="connection", attempts=4)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.cause, copy.kind, copy.attempts, str(copy)) == (
        "reset by peer",
        "connection",
        4,
        str(error),
    )
