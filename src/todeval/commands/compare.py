"""``todeval compare RUN_A RUN_B [RUN_C ...]``: paired comparison of runs with the first.

Prints one block per compared run -- who played each role, the selection and protocol, the
shared tasks, then a table (metric, A, B, B - A with a 95% paired-bootstrap CI, the bootstrap
p-value, McNemar's exact p for binary one-trial metrics) and the cost and latency ratios -- and
writes the :class:`~todeval.results.comparison_record.Comparison` as JSON with ``-o``. Runs over
different selections of one task set are refused unless ``--shared-tasks``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from todeval.errors import UsageError
from todeval.registry import Command, Registry

if TYPE_CHECKING:  # the statistics (numpy) are imported when the command runs
    from todeval.results.comparison_record import Comparison, PairComparison, RunInfo


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from todeval.stats.bootstrap import DEFAULT_RESAMPLES

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
    parser.add_argument(
        "--adjust",
        choices=["holm", "bh", "none"],
        default="holm",
        help="correct p-values for the number of tests (every run x metric): holm, the "
        "family-wise error (default); bh, Benjamini-Hochberg's false discovery rate; none",
    )
    parser.add_argument(
        "--shared-tasks",
        action="store_true",
        help="compare runs over different selections of one task set (--limit, ids) on the "
        "tasks both scored (default: refuse them)",
    )


def _p(p: float, *, exact: bool = False) -> str:
    """Three decimals; below 0.001 an exact p keeps two digits, a bootstrap p is '<0.001'."""
    if p >= 0.001:
        return f"{p:.3f}"
    return f"{p:.2g}" if exact else "<0.001"


def _value(v: Any) -> str:
    return "-" if v is None else str(v)


def _either(a: str | None, b: str | None) -> str:
    """``a`` when both agree, else ``a -> b``."""
    return _value(a) if a == b else f"{_value(a)} -> {_value(b)}"


def _identity_lines(a: RunInfo | None, b: RunInfo | None) -> list[str]:
    """One line per role (who played it in A -> B), then the selection and the protocol."""
    if a is None or b is None:
        return []
    rows = [(role, _either(a.roles.get(role), b.roles.get(role))) for role in _roles(a, b)]
    rows.append(("selection", _either(a.selection or None, b.selection or None)))
    if a.protocol is not None or b.protocol is not None:
        rows.append(("protocol", _either(a.protocol, b.protocol)))
    width = max(len("A (baseline)"), *(len(name) for name, _ in rows)) + 2
    return [f"{name + ':':<{width}}{text}" for name, text in rows]


def _roles(a: RunInfo, b: RunInfo) -> list[str]:
    return [*a.roles, *(role for role in b.roles if role not in a.roles)]


def format_pair(pair: PairComparison, comparison: Comparison) -> str:
    """The readable block for one run against the baseline."""
    from todeval.console.tables import render_rows

    infos = {info.label: info for info in comparison.runs}
    a, b = infos.get(pair.baseline), infos.get(pair.run)
    lines = [f"A (baseline): {pair.baseline}", f"B:            {pair.run}"]
    lines += _identity_lines(a, b)
    lines.append(
        f"shared tasks: {pair.shared_tasks} (dropped: {pair.dropped_baseline_only} only in A, "
        f"{pair.dropped_run_only} only in B)"
    )
    # the keys the roles' choices set are on the role lines above
    role_keys = {key for info in (a, b) if info is not None for key in info.role_config_keys}
    config_diff = {k: v for k, v in pair.config_diff.items() if k not in role_keys}
    if config_diff:
        diffs = "; ".join(f"{k}: {_value(x)} -> {_value(y)}" for k, (x, y) in config_diff.items())
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
                "-" if m.p_adjusted is None else _p(m.p_adjusted),
                mcnemar,
            ]
        )
    adjusted = f"p {comparison.method.adjustment}"
    header = ["metric", "n", "A", "B", f"B - A [{level}% CI]", "p", adjusted, "McNemar p (b/c)"]
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
    from todeval.stats.multiplicity import ADJUSTMENT_TITLES

    blocks = [format_pair(p, comparison) for p in comparison.pairs]
    m = comparison.method
    blocks.append(
        f"CI: paired percentile bootstrap over shared tasks ({m.resamples} resamples, "
        f"seed {m.seed}); p: two-sided, inverting that bootstrap\n"
        f"p {m.adjustment}: adjusted for the {m.family} tests above (every run x metric) by "
        f"{ADJUSTMENT_TITLES.get(m.adjustment, m.adjustment)}; read significance from it\n"
        "McNemar p: exact, for 0/1 metrics with one trial per task (not adjusted); b = tasks "
        "where A scored 1 and B 0, c = A 0 and B 1"
    )
    return "\n\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    from todeval.results.compare import compare_runs

    metrics = None
    if args.metrics is not None:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        if not metrics:
            raise UsageError("--metrics names no metric")
    comparison = compare_runs(
        args.runs,
        metrics=metrics,
        resamples=args.resamples,
        seed=args.seed,
        shared_tasks=args.shared_tasks,
        adjustment=args.adjust,
    )
    print(format_comparison(comparison))
    if args.output:
        from todeval.core.files import write_output

        # whole or not at all: a failure leaves any previous file as it was (exit 3)
        write_output(Path(args.output), comparison.model_dump_json(indent=2) + "\n")
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
