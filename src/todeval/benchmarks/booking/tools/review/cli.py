"""``todeval booking review RUN_DIR... [-o FILE] [--json]``: the rule review of every episode
(:mod:`todeval.benchmarks.booking.review`) of finished booking runs -- no re-run needed.

Prints, per run, the failed episodes by verdict (system, simulator, both, unclear) with Wilson
intervals, and the faults by side and kind; ``-o FILE`` writes one review per line (JSONL).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from todeval.errors import BadInputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="booking run directories")
    parser.add_argument("-o", "--output", metavar="FILE", help="write every review here (JSONL)")
    parser.add_argument("--json", action="store_true", help="print the reviews as JSON lines")


def run_command(args: argparse.Namespace) -> int:
    from todeval.benchmarks.booking.review import VERDICTS, Review, review_episode
    from todeval.benchmarks.booking.tasks import load_tasks
    from todeval.console.tables import render_rows
    from todeval.core.files import write_output
    from todeval.runner.store import RunDirectory
    from todeval.stats import wilson_interval

    reviews: list[Review] = []
    blocks: list[str] = []
    for path in map(Path, args.runs):
        store = RunDirectory(path)
        if not store.exists():
            raise BadInputError(f"{path}: not a run directory (no manifest.json)")
        manifest = store.read_manifest()
        if manifest.benchmark != "booking":
            raise BadInputError(f"{path}: a {manifest.benchmark} run, not a booking run")
        task_set = str(manifest.config.get("task_set", "test"))
        tasks = {t.task_id: t for t in load_tasks(task_set)}
        found = []
        for record in store.iter_episodes():
            task = tasks.get(record.task_id)
            if task is None:
                raise BadInputError(f"{path}: task {record.task_id} is not in the {task_set} set")
            found.append(review_episode(task, record))
        reviews += found
        failed = [r for r in found if r.verdict != "none"]
        verdicts = Counter(r.verdict for r in failed)
        rows = []
        for verdict in VERDICTS[:-1]:
            k = verdicts[verdict]
            low, high = wilson_interval(k, len(failed)) if failed else (0.0, 0.0)
            rows.append(
                [verdict, str(k), f"{k / len(failed) if failed else 0:.3f} [{low:.3f}, {high:.3f}]"]
            )
        faults = Counter((f.side, f.kind) for r in failed for f in r.faults)
        fault_rows = [[side, kind, str(n)] for (side, kind), n in sorted(faults.items())]
        block = [f"{path}: {len(found)} episodes, {len(failed)} failed", ""]
        block.append(render_rows(["who failed", "episodes", "share of failed [95% Wilson]"], rows))
        if fault_rows:
            block += ["", render_rows(["side", "fault", "failed episodes with it"], fault_rows)]
        blocks.append("\n".join(block))
    lines = "".join(r.model_dump_json() + "\n" for r in reviews)
    if args.output:
        write_output(Path(args.output), lines)
    if args.json:
        print(lines, end="")
    else:
        print("\n\n".join(blocks))
    return 0
