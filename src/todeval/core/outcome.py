"""The outcome of one episode, shared by every benchmark."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How an episode ended.

    ``infrastructure_error`` episodes (a model server that never answered, a crash in our own
    code) are excluded from every metric denominator, counted separately, and re-run on resume.
    """

    SUCCESS = "success"
    FAILURE = "failure"
    ABORTED = "aborted"
    USER_SIMULATOR_ERROR = "user_simulator_error"
    INFRASTRUCTURE_ERROR = "infrastructure_error"

    @property
    def counts_in_metrics(self) -> bool:
        return self is not Outcome.INFRASTRUCTURE_ERROR
