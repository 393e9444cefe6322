"""Errors raised by the model layer.

* :class:`InfrastructureError` -- a model call failed for reasons outside the model (server down,
  timeouts, rate limits, broken bodies) after every retry. It subclasses the project-wide
  :class:`todeval.errors.InfrastructureError`, so the runner records the episode as an
  infrastructure error and re-runs it on resume.
* :class:`TransientError` -- raised by a raw backend for one failed attempt that is worth
  retrying; the retry wrapper turns the last one into an :class:`InfrastructureError`.

A model's own bad output (invalid JSON, no tool call, wrong tool) is never an error here: it is
returned as text for the caller to judge.
"""

from __future__ import annotations

from typing import Any, Literal

from todeval.errors import InfrastructureError as _ProjectInfrastructureError

FailureKind = Literal[
    "connection", "timeout", "rate_limit", "server", "malformed", "client", "local"
]


class InfrastructureError(_ProjectInfrastructureError):
    """A model call that could not be completed; ``cause`` says why in one line."""

    origin = "model layer"

    def __init__(self, cause: str, *, kind: FailureKind = "connection", attempts: int = 1) -> None:
        super().__init__(f"model call failed after {attempts} attempt(s): {cause}")
        self.cause = cause
        self.kind: FailureKind = kind
        self.attempts = attempts

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with all fields (episodes may run in other processes, e.g. Ray workers)."""
        return (_rebuild, (self.cause, self.kind, self.attempts))


def _rebuild(cause: str, kind: FailureKind, attempts: int) -> InfrastructureError:
    return InfrastructureError(cause, kind=kind, attempts=attempts)


class TransientError(Exception):
    """One failed attempt that may succeed when repeated.

    ``retry_after`` is the server's ``Retry-After`` in seconds (HTTP 429/503), if it sent one.
    ``retryable=False`` marks a failure that repeating cannot fix (e.g. HTTP 400); the retry
    wrapper then gives up at once.
    """

    def __init__(
        self,
        cause: str,
        *,
        kind: FailureKind,
        retry_after: float | None = None,
        retryable: bool = True,
    ) -> None:
        super().__init__(cause)
        self.cause = cause
        self.kind: FailureKind = kind
        self.retry_after = retry_after
        self.retryable = retryable
