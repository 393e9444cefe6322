"""Self-play booking benchmark (clem:todd protocol): a user simulator with a MultiWOZ goal
talks to a dialogue system under test; the game master runs the DB, validates bookings and
scores Inform, Booking accuracy and Attributes."""

from __future__ import annotations

from typing import Any

from todeval.registry import Command, Registry


def _cli() -> Any:
    from todeval.benchmarks.booking import cli  # imported only when a booking command runs

    return cli


def register(registry: Registry) -> None:
    registry.add(
        "run",
        Command(
            "booking",
            "self-play booking (clem:todd protocol)",
            lambda parser: _cli().add_run_arguments(parser),
            lambda args: int(_cli().run_command(args)),
        ),
    )
    registry.add(
        "data",
        Command(
            "check",
            "audit the feasibility of booking goals against their DB",
            lambda parser: _cli().add_check_arguments(parser),
            lambda args: int(_cli().check_command(args)),
        ),
    )


__all__ = ["register"]
