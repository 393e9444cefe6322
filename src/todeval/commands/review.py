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
    registry.annotation_source(
        "review",
        "who failed? the failed episodes of run directories (review:RUN_DIR[,RUN_DIR...]), "
        "the rule reviewer's verdict as the gold",
        items="todeval.review.annotation:items",
    )
