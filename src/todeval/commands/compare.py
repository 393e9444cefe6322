"""``todeval compare RUN_A RUN_B [RUN_C ...]``: paired comparison of runs with the first.

Prints one block per compared run -- who played each role, the selection and protocol, the
shared tasks, the verdict on the benchmark's primary metric, then a table (the primary metric
first; its better direction from the benchmark's profile, A, B, B - A with a 95%
paired-bootstrap CI, the bootstrap p-value raw and adjusted, the reading, McNemar's exact p for
binary one-trial metrics) and the cost and latency figures with their ratios -- and
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


def _p(p: float, *, exact: bool = False, bound: bool = False) -> str:
    """Three decimals; below 0.001 two digits; ``<=`` marks a bound (a bootstrap p at its
    floor, or an adjusted p computed from one)."""
    shown = f"{p:.3f}" if p >= 0.001 else f"{p:.2g}"
    return f"<={shown}" if bound and not exact else shown


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
    from todeval.results.compare import reading

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
    if pair.verdict is not None:
        lines.append(f"verdict: {pair.verdict.text}")
    elif comparison.method.primary:
        lines.append(
            f"verdict: none (the primary metric, {comparison.method.primary}, is not compared)"
        )
    level = round(comparison.method.level * 100)
    rows = []
    for m in pair.metrics:
        mcnemar = "-"
        if m.mcnemar is not None:
            mcnemar = f"{_p(m.mcnemar.p_value, exact=True)} ({m.mcnemar.b}/{m.mcnemar.c})"
        adjusted = "-"
        if m.p_adjusted is not None:
            adjusted = _p(m.p_adjusted, bound=m.p_adjusted_bound)
        rows.append(
            [
                m.metric + (" (primary)" if m.primary else ""),
                m.better or "?",
                str(m.n_tasks),
                f"{m.mean_a:.3f}",
                f"{m.mean_b:.3f}",
                f"{m.diff:+.3f} [{m.ci_low:+.3f}, {m.ci_high:+.3f}]",
                _p(m.p_value, bound=m.p_at_floor),
                adjusted,
                reading(m) or "-",
                mcnemar,
            ]
        )
    adjusted_header = f"p {comparison.method.adjustment}"
    header = [
        "metric",
        "better",
        "n",
        "A",
        "B",
        f"B - A [{level}% CI]",
        "p raw",
        adjusted_header,
        "B vs A",
        "McNemar p (b/c)",
    ]
    lines += ["", render_rows(header, rows)]
    if pair.ratios:
        ratio_rows = [
            [r.name, _figure(r.a), _figure(r.b), "-" if r.ratio is None else f"{r.ratio:.3f}"]
            for r in pair.ratios
        ]
        header = ["cost/latency (whole runs; lower is better)", "A", "B", "B/A"]
        lines += ["", render_rows(header, ratio_rows)]
    for note in pair.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _figure(value: float | None) -> str:
    return "not recorded" if value is None else f"{value:.4g}"


def format_comparison(comparison: Comparison) -> str:
    """The whole comparison as text: one block per run, then how to read it."""
    from todeval.stats.multiplicity import ADJUSTMENT_TITLES
    from todeval.stats.paired import p_floor

    blocks = [format_pair(p, comparison) for p in comparison.pairs]
    m = comparison.method
    floor = p_floor(m.resamples)
    power = round(m.power * 100)
    spread = ""
    if m.alpha_adjusted < m.alpha:
        spread = f" ({m.alpha:g} over the {m.family} tests; --metrics narrows them)"
    lines = [
        f"CI: paired percentile bootstrap over shared tasks ({m.resamples} resamples, "
        f"seed {m.seed}); p raw: two-sided, inverting that bootstrap",
        f"p {m.adjustment}: p raw adjusted for the {m.family} tests above (every run x metric) "
        f"by {ADJUSTMENT_TITLES.get(m.adjustment, m.adjustment)}; never below p raw; the "
        "verdicts and 'B vs A' read it against "
        f"{m.alpha:g}",
        f"<=: a bound. No resample fell on the far side of 0, so p raw is at most the "
        f"bootstrap's floor 2/({m.resamples}+1) = {floor:.2g}, and p {m.adjustment} at most "
        "the figure shown (more --resamples lower the floor)",
        "better: the direction the benchmark's profile declares (? none declared; neither: a "
        "figure to read, not to win on)",
        f"detectable at this size: the smallest difference found with {power}% power at level "
        f"{m.alpha_adjusted:.2g}{spread}, from the spread of the task differences",
        "McNemar p: exact, for 0/1 metrics with one trial per task (not adjusted); b = tasks "
        "where A scored 1 and B 0, c = A 0 and B 1",
    ]
    if m.adjustment == "none":
        lines[1] = f"p none: no adjustment for the {m.family} tests above; the verdicts read p raw"
    metrics = [x for pair in comparison.pairs for x in pair.metrics]
    if not any(x.p_at_floor or x.p_adjusted_bound for x in metrics):
        del lines[2]  # no bound shown
    blocks.append("\n".join(lines))
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
            "compare runs with the first over their shared tasks: a verdict on the primary metric, "
            "paired CIs and tests",
            add_arguments,
            run,
        ),
    )
