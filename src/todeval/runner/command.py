"""Executing a run from the command line: the start line, the run, the notes it printed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from todeval.runner.execute import RunPlan, RunResult, execute_plan


def execute_from_args(
    plan: RunPlan, out: Path, args: argparse.Namespace, *, start_line: str
) -> RunResult:
    """Run ``plan`` into ``out`` with the options of ``add_run_arguments``.

    ``start_line`` (what runs, and where) is printed first unless ``--quiet``; the runner's
    notes (a run directory of another version, ...) after the run.
    """
    if not args.quiet:
        print(f"{start_line} -> {out}", file=sys.stderr)
    result = execute_plan(
        plan,
        out,
        max_concurrency=args.max_concurrency,
        quiet=args.quiet,
        command=getattr(args, "_argv", None),
        executor=args.executor,
        ray_address=args.ray_address,
    )
    for note in result.notes:
        print(note, file=sys.stderr)
    return result
