"""Running a generation run from the CLI: execution, the scorer's table, the footer."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from todeval.benchmarks._turns.options import TurnsConfig
from todeval.benchmarks._turns.plan import PREDICTIONS_FILE, TurnsDialogue
from todeval.benchmarks._turns.report import run_footer
from todeval.runner.command import execute_from_args
from todeval.runner.options import RuntimeOptions, runtime_options
from todeval.runner.plan import RunPlan

BuildPlan = Callable[[RuntimeOptions], tuple[RunPlan, Sequence[TurnsDialogue]]]


def execute_run(
    args: argparse.Namespace,
    config: TurnsConfig,
    default_out: str,
    build: BuildPlan,
    *,
    selection: str,
    turns_word: str,
    metric_prefix: str,
    table: Callable[[Path], str],
) -> int:
    """Build the plan for the run directory (``--out`` or ``default_out``), execute it, and
    print the scorer's table (``table(out)``) and the footer.

    The start line reads ``<benchmark>: N <selection> (T <turns_word>), model ...``.
    """
    out = Path(args.out or default_out)
    plan, dialogues = build(runtime_options(args, out))
    turns = sum(d.n_turns for d in dialogues)
    start = (
        f"{plan.benchmark}: {len(dialogues)} {selection} ({turns} {turns_word}), model "
        f"{config.model}, seed {config.seed}"
    )
    result = execute_from_args(plan, out, args, start_line=start)
    if args.quiet:
        return 0
    if result.already_complete:
        print(f"{out} already holds a complete run with this config; its scores:")
    if result.to_retry < len(plan.jobs):  # else nothing to score: the CLI says what to retry
        print(table(out))
    print(run_footer(result.summary, out, PREDICTIONS_FILE, metric_prefix))
    return 0
