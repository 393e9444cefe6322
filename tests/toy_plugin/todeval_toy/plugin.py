"""The toy's entry point: names only (its spec is imported when a toy command runs)."""

from todeval.registry import Registry


def register(registry: Registry) -> None:
    help = "number guessing (a worked example of a benchmark plug-in)"
    registry.benchmark("toy", help, spec="todeval_toy.game:SPEC")
