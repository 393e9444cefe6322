"""The toy's entry point: ``[project.entry-points."todeval.plugins"] toy = "todeval_toy.plugin"``.

Only names are registered here; the benchmark's modules are imported when a toy command runs.
"""

from __future__ import annotations

from todeval.registry import Registry


def register(registry: Registry) -> None:
    registry.profile("todeval_toy.profile:PROFILE", benchmark="toy")
    registry.benchmark(
        "toy",
        "number guessing (a worked example of a benchmark plug-in)",
        cli="todeval_toy.cli",
        plan_factory="todeval_toy.run:plan_from_config",
    )
    registry.controls("toy", "todeval_toy.controls:SUITE")
    registry.group("toy", "commands of the toy benchmark")
    registry.lazy(
        "toy",
        "tasks",
        "list the toy tasks: range, guess cap and (with --secrets) the secret",
        "todeval_toy.cli",
        add="add_tasks_arguments",
        run="tasks_command",
    )
