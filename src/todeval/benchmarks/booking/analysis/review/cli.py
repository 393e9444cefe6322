"""``todeval booking review RUN_DIR... [-o FILE] [--json]``: ``todeval review`` for booking runs
(:mod:`todeval.review.command`, the booking reviewer :data:`~todeval.benchmarks.booking.review.
REVIEWER`); a run of another benchmark is refused."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval.errors import BadInputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from todeval.review.command import add_arguments as add

    add(parser)


def run_command(args: argparse.Namespace) -> int:
    from todeval.runner.store import RunDirectory

    for path in map(Path, args.runs):
        store = RunDirectory(path)
        if store.exists() and store.read_manifest().benchmark != "booking":
            raise BadInputError(f"{path}: a {store.read_manifest().benchmark} run, not booking")
    from todeval.review.command import run_command as run

    return run(args)
