"""Self-play booking benchmark (clem:todd protocol): a user simulator with a MultiWOZ goal
talks to a dialogue system under test; the game master runs the DB, validates bookings and
scores Inform, Booking accuracy and Attributes."""

from __future__ import annotations

from todeval.registry import Command, Registry


def register(registry: Registry) -> None:
    from todeval.benchmarks.booking import cli

    registry.add(
        "run",
        Command(
            "booking",
            "self-play booking (clem:todd protocol)",
            cli.add_run_arguments,
            cli.run_command,
        ),
    )
    registry.add(
        "data",
        Command(
            "check",
            "audit the feasibility of booking goals against their DB",
            cli.add_check_arguments,
            cli.check_command,
        ),
    )
