"""Errors that map to the CLI's exit codes.

Exit codes (every command): 0 ok, 1 internal error, 2 usage, 3 bad input file, 4 refused,
5 finished with episodes to retry (infrastructure errors: run the same command again),
130 interrupted (Ctrl-C or SIGTERM; finished episodes are kept: run the same command again).
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_REFUSED = 4
EXIT_RETRY = 5
EXIT_INTERRUPTED = 130


class TodevalError(Exception):
    """An expected error: the CLI prints its one-line message and exits with ``exit_code``."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(TodevalError):
    """Unknown benchmark/system/user/task set, bad option combination."""

    exit_code = EXIT_USAGE


class BadInputError(TodevalError):
    """An input file is missing, unreadable or malformed (the message names file and record)."""

    exit_code = EXIT_BAD_INPUT


class RefusedError(TodevalError):
    """The request is understood but refused, e.g. resuming a run with a different config."""

    exit_code = EXIT_REFUSED


class EndpointRefusedError(UsageError):
    """A model endpoint refused every call alike (a rejected key, an unknown model or route):
    no retry and no other episode can succeed, so the run stops at the first one."""


class StoppedForRetryError(TodevalError):
    """A run stopped early with episodes left that a later try may finish (an endpoint that
    only rate-limits): every finished episode is kept; run the same command later."""

    exit_code = EXIT_RETRY


class InterruptedRunError(TodevalError):
    """The run was stopped by Ctrl-C or SIGTERM after keeping every finished episode."""

    exit_code = EXIT_INTERRUPTED


def first_problem(exc: Any) -> str:
    """``where: message`` of a pydantic ``ValidationError``'s first error, for a one-line error."""
    errors = exc.errors()
    if not errors:
        return str(exc).splitlines()[0]
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "top level"
    return f"{where}: {first.get('msg', 'invalid')}"


def choice_error(kind: str, value: str, choices: list[str] | tuple[str, ...]) -> UsageError:
    """A one-line usage error naming the valid choices (and the closest, for a typo)."""
    import difflib

    close = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.75)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return UsageError(
        f"unknown {kind} {value!r}{hint}; valid choices: {', '.join(sorted(choices))}"
    )


class InfrastructureError(Exception):
    """A failure outside the players' control (a model server that never answered).

    Episodes ending in one are recorded as ``infrastructure_error``, excluded from metrics and
    re-run on resume. A model's own bad output is never an infrastructure error.

    ``origin`` says which layer of ours raised it (``"model layer"``, ``"agent channel"``). One
    raised by a player's own code has none: when the player is the agent under test, its
    episode is its own failure (``system_error``), not a free re-run on resume
    (:func:`todeval.dialogue.episode.guarded`).
    """

    origin: str = ""
