"""Running a generation run from the CLI: execution, the scorer's table, the footer."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from todeval.benchmarks._turns.options import TurnsConfig
from todeval.benchmarks._turns.plan import PREDICTIONS_FILE, TurnsDialogue
from todeval.benchmarks._turns.report import run_footer
from todeval.driver import RunCommand, drive
from todeval.results.profile import BenchmarkProfile
from todeval.runner.execute import RunResult
from todeval.runner.options import RuntimeOptions
from todeval.runner.plan import RunPlan
from todeval.spec import BenchmarkSpec


def execute_run(
    args: argparse.Namespace,
    config: TurnsConfig,
    spec: BenchmarkSpec[Any, Any],
    *,
    profile: BenchmarkProfile,
    selection: str,
    turns_word: str,
    metric_prefix: str,
    table: Callable[[Path, Any], str],
) -> int:
    """Run ``config`` through the shared driver and print the scorer's table (``table(out,
    scorer)``, the run's scorer holding its last scoring) and the footer.

    The start line reads ``<benchmark>: N <selection> (T <turns_word>), model ...``.
    """
    built: dict[str, Any] = {}

    def plan_of(cfg: TurnsConfig, runtime: RuntimeOptions) -> RunPlan:
        plan: RunPlan = spec.plan(cfg, runtime)
        built["plan"] = plan
        return plan

    def start_line(_: TurnsConfig, plan: RunPlan) -> str:
        dialogues: Sequence[TurnsDialogue] = list(plan.context.tasks.values())
        turns = sum(d.n_turns for d in dialogues)
        return (
            f"{plan.benchmark}: {len(dialogues)} {selection} ({turns} {turns_word}), model "
            f"{config.model}, seed {config.seed}"
        )

    def closing(result: RunResult, out: Path) -> str:
        parts = []
        if result.to_retry < len(built["plan"].jobs):  # else nothing to score: the CLI says so
            parts.append(table(out, built["plan"].context.shared.scorer))
        parts.append(run_footer(result.summary, out, PREDICTIONS_FILE, metric_prefix))
        return "\n".join(parts)

    command = RunCommand(profile=profile, build=plan_of, start_line=start_line, closing=closing)
    return drive(args, config, command)
