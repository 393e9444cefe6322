"""``todeval compare RUN_A RUN_B [RUN_C ...]``: paired comparison of runs with the first.

Prints one table per compared run (metric, A, B, B - A with a 95% paired-bootstrap CI, the
bootstrap p-value, McNemar's exact p for binary one-trial metrics), the cost and latency
ratios, and writes the :class:`~todeval.stats.Comparison` as JSON with ``-o``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from todeval.console.tables import render_rows
from todeval.errors import UsageError
from todeval.registry import Command, Registry
from todeval.results.compare import compare_runs
from todeval.results.comparison import Comparison, PairComparison
from todeval.stats.bootstrap import DEFAULT_RESAMPLES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run directories; the first is A")
    parser.add_argument("-o", "--output", metavar="OUT.json", help="write the comparison here")
    parser.add_argument(
        "--metrics", help="comma-separated metric names (default: every metric in both runs)"
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help=f"bootstrap resamples (default {DEFAULT_RESAMPLES})",
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def _p(p: float, *, exact: bool = False) -> str:
    """Three decimals; below 0.001 an exact p keeps two digits, a bootstrap p is '<0.001'."""
    if p >= 0.001:
        return f"{p:.3f}"
    return f"{p:.2g}" if exact else "<0.001"


def _value(v: Any) -> str:
    return "-" if v is None else str(v)


def format_pair(pair: PairComparison, comparison: Comparison) -> str:
    """The readable block for one run against the baseline."""
    lines = [f"A (baseline): {pair.baseline}", f"B:            {pair.run}"]
    lines.append(
        f"shared tasks: {pair.shared_tasks} (dropped: {pair.dropped_baseline_only} only in A, "
        f"{pair.dropped_run_only} only in B)"
    )
    if pair.config_diff:
        diffs = "; ".join(
            f"{k}: {_value(a)} -> {_value(b)}" for k, (a, b) in pair.config_diff.items()
        )
        lines.append(f"config differs: {diffs}")
    level = round(comparison.method.level * 100)
    rows = []
    for m in pair.metrics:
        mcnemar = "-"
        if m.mcnemar is not None:
            mcnemar = f"{_p(m.mcnemar.p_value, exact=True)} ({m.mcnemar.b}/{m.mcnemar.c})"
        rows.append(
            [
                m.metric,
                str(m.n_tasks),
                f"{m.mean_a:.3f}",
                f"{m.mean_b:.3f}",
                f"{m.diff:+.3f} [{m.ci_low:+.3f}, {m.ci_high:+.3f}]",
                _p(m.p_value),
                mcnemar,
            ]
        )
    header = ["metric", "n", "A", "B", f"B - A [{level}% CI]", "p", "McNemar p (b/c)"]
    lines += ["", render_rows(header, rows)]
    if pair.ratios:
        ratio_rows = [
            [r.name, f"{r.a:.4g}", f"{r.b:.4g}", "-" if r.ratio is None else f"{r.ratio:.3f}"]
            for r in pair.ratios
        ]
        lines += ["", render_rows(["cost/latency (whole runs)", "A", "B", "B/A"], ratio_rows)]
    for note in pair.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def format_comparison(comparison: Comparison) -> str:
    """The whole comparison as text: one block per run, then how to read it."""
    blocks = [format_pair(p, comparison) for p in comparison.pairs]
    m = comparison.method
    blocks.append(
        f"CI: paired percentile bootstrap over shared tasks ({m.resamples} resamples, "
        f"seed {m.seed}); p: two-sided, inverting that bootstrap\n"
        "McNemar p: exact, for 0/1 metrics with one trial per task; b = tasks where A scored 1 "
        "and B 0, c = A 0 and B 1"
    )
    return "\n\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    metrics = None
    if args.metrics is not None:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        if not metrics:
            raise UsageError("--metrics names no metric")
    comparison = compare_runs(args.runs, metrics=metrics, resamples=args.resamples, seed=args.seed)
    print(format_comparison(comparison))
    if args.output:
        out = Path(args.output)
        try:
            out.write_text(comparison.model_dump_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{out}: cannot write the output ({exc.strerror or exc})") from None
    return 0


def register(registry: Registry) -> None:
    registry.add(
        "top",
        Command(
            "compare",
            "compare runs with the first over their shared tasks (paired CIs and tests)",
            add_arguments,
            run,
        ),
    )
