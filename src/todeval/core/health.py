"""What the model layer tells the runner about a run's endpoints, to fail fast and say why.

A benchmark decides how a failed model call ends its episode (an infrastructure error, a
system error, ...), and many catch every exception of a participant. So the runner does not
learn from episode outcomes that an endpoint is refusing or unreachable; instead the retry
layer (:class:`todeval.backends.retry.RetryingBackend`) reports every call's fate to the
:class:`RunHealth` of the run it serves, found through a context variable the runner sets
around its event loop (tasks and threads started from it inherit it):

* :meth:`RunHealth.refused` -- an endpoint refused a call in a way no retry or other episode
  can fix (401/403: the key, 404: the model or the URL). The runner stops at once.
* :meth:`RunHealth.call_ok` and :meth:`RunHealth.call_failed` -- per endpoint, how many calls
  succeeded, and the first cause of a failure after every retry. The runner stops when an
  endpoint never answered a single call over the first :data:`UNREACHABLE_AFTER_EPISODES`
  episodes of a session, every call it was sent having failed to connect; and when an endpoint
  rate-limits calls past their whole retry budget (HTTP 429 until the call gave up): at the
  first such call when the endpoint never answered one, else after
  :data:`RATE_LIMITED_CALLS` such calls in a row (:meth:`RunHealth.rate_limited`). A 429 is an
  answer of a kind, but not one an episode can use: a run against an endpoint that answers
  nothing else ends within minutes with its episodes left to retry (exit 5), not hours later.

Outside a run (a scorer, a test calling a backend directly) there is no health and reports are
dropped. Episodes on Ray actors report to a health of their own, sent back with the record and
merged into the driver's (:meth:`RunHealth.snapshot`, :meth:`RunHealth.merge`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from todeval.errors import EndpointRefusedError

UNREACHABLE_AFTER_EPISODES = 3
"""Episodes of a session after which an endpoint that never answered (every call failed to
connect, after the retry policy) stops the run."""

RATE_LIMITED_CALLS = 3
"""Calls in a row that gave up on rate limits (429 past their retry budget) after which an
endpoint that did answer earlier calls stops the run (one is enough when it never answered)."""


@dataclass
class EndpointHealth:
    ok: int = 0
    connection_failures: int = 0
    other_failures: int = 0
    first_cause: str | None = None
    rate_limited: int = 0  # calls that gave up on rate limits (429 past the retry budget)
    rate_limited_streak: int = 0  # such calls since the last call answered
    last_rate_limit: str | None = None  # the cause of the latest


@dataclass
class RunHealth:
    """Per endpoint: calls answered and calls failed; the first refusal, if any."""

    endpoints: dict[str, EndpointHealth] = field(default_factory=dict)
    refusal: EndpointRefusedError | None = None

    def _of(self, endpoint: str) -> EndpointHealth:
        return self.endpoints.setdefault(endpoint, EndpointHealth())

    def refused(self, error: EndpointRefusedError) -> None:
        if self.refusal is None:
            self.refusal = error

    def call_ok(self, endpoint: str) -> None:
        health = self._of(endpoint)
        health.ok += 1
        health.rate_limited_streak = 0

    def call_failed(
        self, endpoint: str, *, connection: bool, cause: str, rate_limited: bool = False
    ) -> None:
        health = self._of(endpoint)
        if connection:
            health.connection_failures += 1
        else:
            health.other_failures += 1
        if health.first_cause is None:
            health.first_cause = cause
        if rate_limited:
            health.rate_limited += 1
            health.rate_limited_streak += 1
            health.last_rate_limit = cause

    def snapshot(self) -> dict[str, Any]:
        """What this health holds, as JSON-able data (from a worker process to the driver)."""
        return {
            "refusal": None if self.refusal is None else self.refusal.message,
            "endpoints": {name: asdict(h) for name, h in self.endpoints.items()},
        }

    def merge(self, snapshot: dict[str, Any]) -> None:
        """Add what a worker's :meth:`snapshot` reports."""
        if snapshot.get("refusal") and self.refusal is None:
            self.refusal = EndpointRefusedError(str(snapshot["refusal"]))
        for name, data in (snapshot.get("endpoints") or {}).items():
            health = self._of(name)
            health.ok += int(data.get("ok", 0))
            health.connection_failures += int(data.get("connection_failures", 0))
            health.other_failures += int(data.get("other_failures", 0))
            if health.first_cause is None and data.get("first_cause"):
                health.first_cause = str(data["first_cause"])
            if int(data.get("ok", 0)):  # the worker's calls answered since: a new streak
                health.rate_limited_streak = 0
            health.rate_limited += int(data.get("rate_limited", 0))
            health.rate_limited_streak += int(data.get("rate_limited_streak", 0))
            if data.get("last_rate_limit"):
                health.last_rate_limit = str(data["last_rate_limit"])

    def unreachable(self) -> tuple[str, str] | None:
        """(endpoint, first cause) of an endpoint that answered nothing and failed to connect
        on every call it was sent, if there is one."""
        for endpoint, health in sorted(self.endpoints.items()):
            if health.ok == 0 and health.other_failures == 0 and health.connection_failures:
                return endpoint, health.first_cause or "connection failed"
        return None

    def rate_limited(self) -> tuple[str, str, bool] | None:
        """(endpoint, latest cause, whether it ever answered) of an endpoint whose calls give
        up on rate limits: one such call when it answered none, else
        :data:`RATE_LIMITED_CALLS` in a row; ``None`` when there is none."""
        for endpoint, health in sorted(self.endpoints.items()):
            if not health.rate_limited_streak:
                continue
            if health.ok == 0 or health.rate_limited_streak >= RATE_LIMITED_CALLS:
                cause = health.last_rate_limit or "rate limited (429)"
                return endpoint, cause, health.ok > 0
        return None


_CURRENT: ContextVar[RunHealth | None] = ContextVar("todeval_run_health", default=None)


def current_health() -> RunHealth | None:
    """The health of the run this code serves, or ``None`` outside a run."""
    return _CURRENT.get()


@contextmanager
def watching(health: RunHealth) -> Iterator[RunHealth]:
    """Make ``health`` the current run's for the code (and the event loop) run inside."""
    token = _CURRENT.set(health)
    try:
        yield health
    finally:
        _CURRENT.reset(token)


__all__ = [
    "RATE_LIMITED_CALLS",
    "UNREACHABLE_AFTER_EPISODES",
    "EndpointHealth",
    "RunHealth",
    "current_health",
    "watching",
]
