"""``todeval validate NAME``: a benchmark's floor and ceiling controls against their bands
(:mod:`todeval.validation`)."""

from __future__ import annotations

from todeval.registry import TOP, Registry


def register(registry: Registry) -> None:
    registry.lazy(
        TOP,
        "validate",
        "play a benchmark's controls (no skill: must score low; the answer: must score high)",
        "todeval.validation.command",
    )
