"""Self-play booking benchmark (clem:todd protocol): a user simulator with a MultiWOZ goal
talks to a dialogue system under test; the game master runs the DB, validates bookings and
scores Inform, Booking accuracy and Attributes."""

from __future__ import annotations

from todeval.registry import Registry

_CLI = "todeval.benchmarks.booking.cli"  # imported only when a booking command runs


def register(registry: Registry) -> None:
    registry.profile(f"{__name__}.profile:PROFILE", benchmark="booking")
    registry.benchmark(
        "booking",
        "self-play booking (clem:todd protocol)",
        cli=_CLI,
        spec="todeval.benchmarks.booking.run:SPEC",
    )
    registry.lazy(
        "data",
        "check",
        "audit the feasibility of booking goals against their DB",
        _CLI,
        add="add_check_arguments",
        run="check_command",
    )
    registry.lazy(
        "data",
        "domain",
        "check a domain pack (your own bookable world) or draw booking tasks from it",
        "todeval.benchmarks.booking.domains.cli",
    )
    registry.group("booking", "analysis of booking runs (simulator realism, who failed)")
    registry.lazy(
        "booking",
        "review",
        "who failed: a rule review of every failed episode (system, simulator, both, unclear)",
        "todeval.benchmarks.booking.analysis.review.cli",
    )
    registry.lazy(
        "booking",
        "realism",
        "simulator realism: LLM-judge naturalness (judge), blind-test accuracy (score)",
        "todeval.benchmarks.booking.analysis.realism.cli",
    )
    registry.annotation_source(
        "booking-realism",
        "which one is the person? a MultiWOZ prefix, the real next user turn and the LLM "
        "user's (SET,user-model=SPEC[,n=N][,seed=S])",
        items="todeval.benchmarks.booking.analysis.realism.blind:items",
        kinds=("pairwise",),
    )
    registry.tool_surface(
        "booking",
        "the six DB and booking tools of a task set, answered on one task's fresh DB",
        factory="todeval.benchmarks.booking.tool_sandbox:tool_sandbox",
    )
    registry.controls("booking", "todeval.benchmarks.booking.systems.controls:SUITE")


__all__ = ["register"]
