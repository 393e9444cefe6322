"""The outcome of one episode, shared by every benchmark."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How an episode ended.

    ``system_error`` episodes (the agent under test raised, timed out, or its own endpoint
    failed) count as failures in every metric, are labelled, and are never re-run on resume:
    crashing on a hard task must not improve a score. ``infrastructure_error`` episodes (our
    model backends serving an LLM-built player failed after every retry, a crash in our own
    code) are excluded from every metric denominator, counted separately, and re-run on resume.
    """

    SUCCESS = "success"
    FAILURE = "failure"
    ABORTED = "aborted"
    USER_SIMULATOR_ERROR = "user_simulator_error"
    SYSTEM_ERROR = "system_error"
    INFRASTRUCTURE_ERROR = "infrastructure_error"

    @property
    def counts_in_metrics(self) -> bool:
        return self is not Outcome.INFRASTRUCTURE_ERROR
