"""The toy's entry point (``[project.entry-points."todeval.plugins"] toy = "todeval_toy.plugin"``):
names only; the benchmark's module is imported when a toy command runs."""

from todeval.registry import Registry


def register(registry: Registry) -> None:
    spec = "todeval_toy.game:SPEC"
    help = "number guessing (a worked example of a benchmark plug-in)"
    registry.benchmark(
        "toy", help, spec=spec, profile=f"{spec}.profile", controls=f"{spec}.controls"
    )
