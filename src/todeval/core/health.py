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
  episodes of a session, every call it was sent having failed to connect.

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


@dataclass
class EndpointHealth:
    ok: int = 0
    connection_failures: int = 0
    other_failures: int = 0
    first_cause: str | None = None


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
        self._of(endpoint).ok += 1

    def call_failed(self, endpoint: str, *, connection: bool, cause: str) -> None:
        health = self._of(endpoint)
        if connection:
            health.connection_failures += 1
        else:
            health.other_failures += 1
        if health.first_cause is None:
            health.first_cause = cause

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

    def unreachable(self) -> tuple[str, str] | None:
        """(endpoint, first cause) of an endpoint that answered nothing and failed to connect
        on every call it was sent, if there is one."""
        for endpoint, health in sorted(self.endpoints.items()):
            if health.ok == 0 and health.other_failures == 0 and health.connection_failures:
                return endpoint, health.first_cause or "connection failed"
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
    "UNREACHABLE_AFTER_EPISODES",
    "EndpointHealth",
    "RunHealth",
    "current_health",
    "watching",
]
