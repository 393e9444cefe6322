"""``todeval review RUN_DIR...``: who failed in finished runs (:mod:`todeval.review`)."""

from __future__ import annotations

from todeval.registry import TOP, Registry


def register(registry: Registry) -> None:
    registry.lazy(
        TOP,
        "review",
        "who failed: every episode of finished runs reviewed for agent and simulator faults",
        "todeval.review.command",
    )
