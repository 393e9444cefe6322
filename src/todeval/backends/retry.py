"""Retries, timeouts and connection limits: the one place that handles a flaky endpoint.

:class:`RetryingBackend` wraps any backend. Every attempt holds a slot of the endpoint's
:class:`AdaptiveLimiter` and runs under a timeout. A :class:`TransientError` (connection error,
timeout, 429, 5xx, malformed body) is retried after an exponential backoff with jitter, or after
the server's ``Retry-After`` when it sent one; when the attempts are used up, when the next wait
would take the call past its total wait budget (``RetryPolicy.max_wait_s``, else the model's
``max_retry_wait_s``), or when the failure is not retryable, an :class:`InfrastructureError`
carries the last cause. So a server answering only 429 with ``Retry-After: 100000`` fails a call
at once instead of holding it for hours. Each call's fate is
reported to the run's :class:`~todeval.core.health.RunHealth` (a refused key or unknown model
stops the run; an endpoint that never answers stops it after a few episodes). Anything else -- a
:class:`todeval.errors.UsageError` for a refused key, a bug -- passes through unchanged.

The limiter is AIMD-like: a 429 halves the endpoint's concurrency (once per "epoch", so a burst
of 429s from calls started together counts once), each success adds ``1/limit`` back, up to the
configured connection limit. The clock and the jitter's random stream are injectable so fault
tests run in milliseconds.
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from todeval.backends.errors import InfrastructureError, TransientError
from todeval.backends.types import Backend, GenerationRequest, GenerationResult, ModelInfo
from todeval.core.health import current_health
from todeval.errors import EndpointRefusedError


class Clock(Protocol):
    """Time source and sleep, replaceable in tests."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real monotonic clock and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class RetryPolicy(BaseModel):
    """How often and how patiently to retry a model call."""

    max_attempts: int = Field(6, ge=1, description="attempts in all, the first included")
    base_delay_s: float = Field(0.5, ge=0, description="backoff before the 2nd attempt")
    max_delay_s: float = Field(30.0, ge=0, description="cap of one backoff")
    max_retry_after_s: float = Field(120.0, ge=0, description="cap of an honoured Retry-After")
    jitter: float = Field(0.5, ge=0, le=1, description="backoff x uniform(1 - jitter, 1)")
    timeout_s: float | None = Field(None, gt=0, description="per attempt; None: the model's")
    max_wait_s: float | None = Field(
        None,
        ge=0,
        description="total wait between the attempts of one call (backoffs and Retry-After); "
        "a wait that would pass it is not started: the call fails. None: the model's",
    )

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Delay after failed attempt number ``attempt`` (1-based)."""
        delay = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return delay * (1.0 - self.jitter * rng.random())

    def delay(self, attempt: int, error: TransientError, rng: random.Random) -> float:
        """The server's Retry-After when given (capped), else the backoff."""
        if error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after_s)
        return self.backoff(attempt, rng)


Outcome = Literal["ok", "rate_limited", "error"]


def _over_budget(error: TransientError, delay: float, waited: float, budget: float) -> str:
    """Why a call gave up before its attempts were used up: the wait would pass its budget."""
    left = max(0.0, budget - waited)
    if error.retry_after is not None:
        asked = f"the server asks for a {error.retry_after:g} s wait"
    else:
        asked = f"the next wait is {delay:g} s"
    return f"{asked}, more than the {left:g} s left of the {budget:g} s a call may wait in all"


class AdaptiveLimiter:
    """A concurrency limit for one endpoint that halves on 429 and creeps back on success."""

    def __init__(self, limit: int, *, min_limit: int = 1) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self.max_limit = limit
        self.min_limit = min(min_limit, limit)
        self._limit = float(limit)
        self._in_flight = 0
        self._epoch = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self.peak_in_flight = 0
        self.decreases = 0

    @property
    def limit(self) -> int:
        """Current number of concurrent calls allowed."""
        return max(self.min_limit, int(self._limit))

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _grant(self) -> None:
        self._in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self._in_flight)

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._grant()
                waiter.set_result(None)

    async def acquire(self) -> int:
        """Wait for a slot; returns the epoch to hand back to :meth:`release`."""
        if self._in_flight < self.limit and not self._waiters:
            self._grant()
            return self._epoch
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._in_flight -= 1  # granted just before the cancellation: give it back
                self._wake()
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise
        return self._epoch

    def release(self, epoch: int, outcome: Outcome) -> None:
        """Free a slot and adapt: 429 -> halve (once per epoch); success -> + 1/limit."""
        self._in_flight -= 1
        if outcome == "rate_limited" and epoch == self._epoch:
            self._limit = max(float(self.min_limit), self._limit / 2)
            self._epoch += 1
            self.decreases += 1
        elif outcome == "ok" and self._limit < self.max_limit:
            self._limit = min(float(self.max_limit), self._limit + 1.0 / self._limit)
        self._wake()


class LimiterPool:
    """One :class:`AdaptiveLimiter` per endpoint, shared by every backend built with the pool."""

    def __init__(self) -> None:
        self._limiters: dict[str, AdaptiveLimiter] = {}

    def get(self, info: ModelInfo) -> AdaptiveLimiter:
        limiter = self._limiters.get(info.endpoint)
        if limiter is None:
            limiter = self._limiters[info.endpoint] = AdaptiveLimiter(info.connection_limit)
        return limiter


class RetryingBackend:
    """Wraps a backend with timeouts, retries and the endpoint's connection limit."""

    def __init__(
        self,
        inner: Backend,
        *,
        policy: RetryPolicy | None = None,
        limiter: AdaptiveLimiter | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self.limiter = limiter or AdaptiveLimiter(inner.info.connection_limit)
        self._clock: Clock = clock or SystemClock()
        self._rng = rng or random.Random(0)

    @property
    def info(self) -> ModelInfo:
        return self.inner.info

    def __repr__(self) -> str:
        return f"RetryingBackend({self.inner!r})"

    async def _attempt(self, request: GenerationRequest, role: str) -> GenerationResult:
        timeout = self.policy.timeout_s or self.inner.info.timeout_s
        epoch = await self.limiter.acquire()
        outcome: Outcome = "error"
        try:
            try:
                async with asyncio.timeout(timeout):
                    result = await self.inner.generate(request, role=role)
            except TimeoutError:
                raise TransientError(f"no reply within {timeout:g} s", kind="timeout") from None
            except TransientError as exc:
                if exc.kind == "rate_limit":
                    outcome = "rate_limited"
                raise
            outcome = "ok"
            return result
        finally:
            self.limiter.release(epoch, outcome)

    @property
    def max_wait_s(self) -> float:
        """The total wait one call may spend between its attempts."""
        if self.policy.max_wait_s is not None:
            return self.policy.max_wait_s
        return self.inner.info.max_retry_wait_s

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        health = current_health()
        endpoint = self.inner.info.endpoint
        budget = self.max_wait_s
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await self._attempt(request, role)
            except TransientError as exc:
                cause = exc.cause
                give_up = not exc.retryable or attempt >= self.policy.max_attempts
                delay = 0.0 if give_up else self.policy.delay(attempt, exc, self._rng)
                if not give_up and waited + delay > budget:
                    give_up = True
                    cause = f"{cause}; {_over_budget(exc, delay, waited, budget)}"
                if give_up:
                    if health is not None:
                        health.call_failed(
                            endpoint,
                            connection=exc.kind == "connection",
                            cause=cause,
                            rate_limited=exc.kind == "rate_limit",
                        )
                    raise InfrastructureError(cause, kind=exc.kind, attempts=attempt) from exc
                waited += delay
                await self._clock.sleep(delay)
            except EndpointRefusedError as exc:
                if health is not None:
                    health.refused(exc)  # the runner stops the run: no episode can succeed
                raise
            else:
                if health is not None:
                    health.call_ok(endpoint)
                return result

    async def aclose(self) -> None:
        await self.inner.aclose()
