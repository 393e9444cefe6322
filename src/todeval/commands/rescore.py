"""``todeval rescore RUN_DIR... [--out DIR | --in-place]``: re-grade stored runs under the
installed scorer (:mod:`todeval.results.rescore`).

Prints, for each run, the scorer versions before and after, then one row per metric (old
mean, new mean, new - old with a 95% paired-bootstrap CI over tasks, the episodes whose value
changed: up / down), the labels and outcomes that changed. Without ``--out`` or ``--in-place``
nothing is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from todeval.errors import UsageError
from todeval.registry import TOP, Command, Registry

if TYPE_CHECKING:
    from todeval.results.rescore import RescoreResult

SHOWN_IDS = 5
"""Episode ids named per changed metric (the rest are counted)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories to re-grade")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        metavar="DIR",
        help="write the re-graded run here (one run) or under DIR/<run name> (several); "
        "DIR must be new or empty",
    )
    where.add_argument(
        "--in-place",
        action="store_true",
        help="rewrite each run's episodes.jsonl and summary.json with the new scores",
    )
    parser.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)"
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    more = len(ids) - SHOWN_IDS
    return shown + (f" (+{more} more)" if more > 0 else "")


def render(result: RescoreResult) -> list[str]:
    """The lines ``todeval rescore`` prints for one run."""
    from todeval.results.rescore import shown_version

    done = result.recomputed
    before = ", ".join(shown_version(v) for v in done.old_versions)
    lines = [
        f"{done.path}: {done.benchmark}, {len(done.records)} episodes, scorer {before} -> "
        f"{done.version}"
    ]
    header = ("metric", "old", "new", "new - old", "95% CI", "changed (up/down)")
    rows = []
    for m in result.metrics:
        ci = "-" if m.ci_low is None else f"[{m.ci_low:+.4f}, {m.ci_high or 0.0:+.4f}]"
        moved = f"{len(m.changed)} ({m.up}/{m.down})"
        if m.only_old or m.only_new:
            moved += f"; only before {m.only_old}, only after {m.only_new}"
        rows.append((m.metric, _num(m.old), _num(m.new), _signed(m.diff), ci, moved))
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = (c.ljust(w) for c, w in zip(row, widths, strict=True))
        lines.append(("  " + "  ".join(cells)).rstrip())
    shifted = [c for c in result.summary if c.old != c.new]
    if result.summary:
        lines.append(
            f"  run-level figures: {len(result.summary)}, {len(shifted)} changed"
            + (" (old -> new, new's CI)" if shifted else "")
        )
    for c in shifted:
        ci = "" if c.ci_low is None else f" [{c.ci_low:.4f}, {c.ci_high or 0.0:.4f}]"
        lines.append(f"    {c.metric}: {_num(c.old)} -> {_num(c.new)} ({_signed(c.diff)}){ci}")
    for m in result.metrics:
        if m.changed:
            lines.append(f"  {m.metric} changed in: {_ids(m.changed)}")
    for label in result.labels:
        if label.changed:
            lines.append(f"  label {label.label} changed in {len(label.changed)}: "
                         f"{_ids(label.changed)}")  # fmt: skip
    if result.outcomes:
        lines.append(f"  outcome changed in {len(result.outcomes)}: {_ids(result.outcomes)}")
    if not any(m.changed for m in result.metrics) and not result.outcomes and not shifted:
        lines.append("  no metric changed")
    if result.written is None:
        lines.append("  nothing written (--out DIR or --in-place to keep the new scores)")
    else:
        lines.append(f"  written: {result.written}")
    return lines


def run_command(args: argparse.Namespace) -> int:
    from todeval.results.rescore import rescore_run

    if args.resamples < 1:
        raise UsageError("--resamples must be at least 1")
    runs = [Path(r) for r in args.runs]
    names = [r.resolve().name for r in runs]
    if args.out is not None and len(runs) > 1 and len(set(names)) < len(names):
        raise UsageError("--out with several runs needs runs of different folder names")
    for run, name in zip(runs, names, strict=True):
        out = None
        if args.out is not None:
            out = Path(args.out) if len(runs) == 1 else Path(args.out) / name
        result = rescore_run(run, out=out, in_place=args.in_place, resamples=args.resamples)
        print("\n".join(render(result)))
    return 0


def register(registry: Registry) -> None:
    registry.add(
        TOP,
        Command(
            "rescore",
            "re-grade runs: every record's metrics, labels and summary from its stored events "
            "under the installed scorer",
            add_arguments,
            run_command,
        ),
    )
