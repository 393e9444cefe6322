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
        plan_factory="todeval.benchmarks.booking.run:plan_from_config",
    )
    registry.lazy(
        "data",
        "check",
        "audit the feasibility of booking goals against their DB",
        _CLI,
        add="add_check_arguments",
        run="check_command",
    )


__all__ = ["register"]
