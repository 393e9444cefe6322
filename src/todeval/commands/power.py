"""``todeval power``: the smallest difference a comparison can detect, and the tasks it needs.

From assumed rates (``--rate 0.6 [--rate-b 0.65] [--icc 0.5]``) or from pilot run directories
(``todeval power RUN_A [RUN_B] [--metric NAME]``, as ``todeval compare`` takes them, or the
older ``--from RUN [RUN_B]``; the metric defaults to the benchmark's primary), for ``--tasks``
tasks and each of ``--trials``:

* the minimum detectable difference at ``--power`` (default 0.8) and level ``--alpha``, paired
  (both systems on the same tasks, as ``todeval compare`` tests) and unpaired;
* with ``--difference D``: the tasks needed to detect ``D``;
* with two runs: the pair as it is -- B - A over the shared tasks and the difference detectable
  at this size from the task differences, as ``compare``'s verdict computes it.

Two runs are refused where ``compare`` refuses them (other benchmark, task set, protocol;
another selection unless ``--shared-tasks``).

The method is :mod:`todeval.stats.power` (docs/statistics.md, "Power and sample size").
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from todeval.errors import BadInputError, UsageError
from todeval.registry import Command, Registry

if TYPE_CHECKING:
    from todeval.stats.power import Design, MeasuredPair, PowerReport, PowerRow, TaskVariance


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="pilot run directories, as todeval compare takes them: A, then B on the same tasks "
        "(one run: a pilot of one system)",
    )
    source = parser.add_argument_group("what is compared (assumed rates, or a pilot)")
    source.add_argument("--rate", type=float, help="system A's success rate (a 0/1 metric)")
    source.add_argument("--rate-b", type=float, help="system B's rate (default: --rate)")
    source.add_argument(
        "--icc",
        type=float,
        default=1.0,
        help="with --rate: how far trials of one task agree, 0-1 (default 1: a task's trials "
        "always agree, as for a deterministic system; more trials then buy nothing)",
    )
    source.add_argument(
        "--from",
        dest="pilot",
        nargs="+",
        metavar="RUN",
        help="pilot run directory (two: A and B on the same tasks, which also measures their "
        "correlation); the same as giving them as RUN arguments",
    )
    source.add_argument(
        "--metric", help="with pilots: the metric (default: the benchmark's primary metric)"
    )
    source.add_argument(
        "--shared-tasks",
        action="store_true",
        help="two pilots over different selections of one task set: pair them on the tasks "
        "both scored (as compare --shared-tasks; default: refuse them)",
    )
    design = parser.add_argument_group("the planned comparison")
    design.add_argument("--tasks", type=int, help="tasks per run (default: the pilot's)")
    design.add_argument(
        "--trials",
        type=int,
        nargs="+",
        default=None,
        help="trials per task (several: one row each; default: the pilot's, else 1)",
    )
    design.add_argument(
        "--correlation",
        type=float,
        default=None,
        help="paired design: correlation of the two systems' task rates (default 0.5, or "
        "measured from two pilots)",
    )
    design.add_argument("--difference", type=float, help="report the tasks needed to detect this")
    design.add_argument("--alpha", type=float, default=0.05, help="test level (default 0.05)")
    design.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report as JSON")


class _Pilot(NamedTuple):
    var_a: TaskVariance
    var_b: TaskVariance
    correlation: float | None
    tasks: int
    trials: int
    metric: str
    pair: MeasuredPair | None


def _pilot(paths: list[str], metric: str | None, args: argparse.Namespace) -> _Pilot:
    """What the pilot runs measure: variances, correlation, A's tasks and trials, the pair."""
    from todeval.results.compare import check_comparable, profile_of
    from todeval.results.runs import load_run
    from todeval.stats.power import estimate_variance

    if len(paths) > 2:
        raise UsageError("give one pilot run, or two (A and B on the same tasks)")
    runs = [load_run(Path(p)) for p in paths]
    if len(runs) == 2:  # refused where compare refuses them
        check_comparable(runs[0], runs[1], paths[0], paths[1], shared_tasks=args.shared_tasks)
    names = sorted(set.intersection(*(set(r.values) for r in runs)))
    if metric is None:
        metric = profile_of(runs[0].manifest.benchmark, [r.summary for r in runs]).primary
        if metric not in names:
            raise UsageError(f"--metric is required; valid choices: {', '.join(names)}")
    if metric not in names:
        raise UsageError(
            f"metric {metric!r} is not in the pilot; valid choices: {', '.join(names)}"
        )
    values = [r.values[metric] for r in runs]
    for path, v in zip(paths, values, strict=True):
        if sum(1 for episodes in v.values() if episodes) < 2:
            raise BadInputError(
                f"{path}: a pilot needs at least two tasks with {metric} (it has {len(v)})"
            )
    variances = [estimate_variance(list(v.values())) for v in values]
    correlation = None
    measured = None
    if len(runs) == 2:
        shared = sorted(set(values[0]) & set(values[1]))
        if len(shared) < 3:
            raise UsageError("the two pilots share fewer than 3 tasks: no correlation to measure")
        xa = [sum(values[0][t]) / len(values[0][t]) for t in shared]
        xb = [sum(values[1][t]) / len(values[1][t]) for t in shared]
        correlation = _pearson(xa, xb)
        measured = _measured(values, shared, xa, xb, args)
    trials = max(1, runs[0].max_trials)
    return _Pilot(
        variances[0], variances[-1], correlation, len(values[0]), trials, metric, measured
    )


def _measured(
    values: list[dict[str, list[float]]],
    shared: list[str],
    xa: list[float],
    xb: list[float],
    args: argparse.Namespace,
) -> MeasuredPair:
    """The pair on its shared tasks, and the difference detectable at this size from its task
    differences (compare's computation, at --alpha and --power)."""
    from todeval.stats.power import MeasuredPair, detectable_paired, round_up

    d = [y - x for x, y in zip(xa, xb, strict=True)]
    n = len(d)
    mean = sum(d) / n
    found = detectable_paired(
        d, binary=_one_pair_binary(values, shared), alpha=args.alpha, target=args.power
    )
    return MeasuredPair(
        tasks=n,
        mean_a=sum(xa) / n,
        mean_b=sum(xb) / n,
        diff=mean,
        sd=math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)),
        detectable=None if found is None else round_up(found),
    )


def _one_pair_binary(values: list[dict[str, list[float]]], shared: list[str]) -> bool:
    """Each shared task one 0/1 episode in each run (compare's McNemar case)."""
    return all(len(v[t]) == 1 and v[t][0] in (0.0, 1.0) for v in values for t in shared)


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else 0.0


def _check(args: argparse.Namespace) -> None:
    if args.runs and args.pilot is not None:
        raise UsageError("give the pilot runs as RUN arguments or with --from, not both")
    if args.runs:
        args.pilot = list(args.runs)
    if (args.rate is None) == (args.pilot is None):
        raise UsageError("give --rate (assumed rates) or pilot runs (RUN_A [RUN_B]), not both")
    if not 0.0 < args.alpha < 1.0 or not args.alpha < args.power < 1.0:
        raise UsageError("--alpha must lie in (0, 1) and --power between it and 1")
    for value, flag in ((args.rate, "--rate"), (args.rate_b, "--rate-b"), (args.icc, "--icc")):
        if value is not None and not 0.0 <= value <= 1.0:
            raise UsageError(f"{flag} must lie in [0, 1]")
    if args.correlation is not None and not -1.0 <= args.correlation <= 1.0:
        raise UsageError("--correlation must lie in [-1, 1]")
    if any(t < 1 for t in args.trials or []) or (args.tasks is not None and args.tasks < 2):
        raise UsageError("--trials must be at least 1 and --tasks at least 2")
    if args.difference is not None and not args.difference > 0:
        raise UsageError("--difference must be positive")


def build_report(args: argparse.Namespace) -> PowerReport:
    from todeval.stats.power import Design, PowerReport, binary_variance

    _check(args)
    pair: MeasuredPair | None = None
    metric = args.metric
    trial_counts = args.trials or [1]
    if args.pilot is not None:
        pilot = _pilot(args.pilot, args.metric, args)
        var_a, var_b, measured, pilot_tasks = (
            pilot.var_a,
            pilot.var_b,
            pilot.correlation,
            pilot.tasks,
        )
        metric, pair = pilot.metric, pilot.pair
        trial_counts = args.trials or [pilot.trials]
        source = "pilot: " + ", ".join(args.pilot)
    else:
        var_a = binary_variance(args.rate, args.icc)
        rate_b = args.rate if args.rate_b is None else args.rate_b
        var_b = binary_variance(rate_b, args.icc)
        measured, pilot_tasks = None, None
        source = f"assumed: rate {args.rate} vs {rate_b}, intra-task correlation {args.icc}"
    tasks = args.tasks or pilot_tasks
    if tasks is None:
        raise UsageError("--tasks is required with assumed rates")
    correlation = args.correlation if args.correlation is not None else measured
    design = Design(var_a, var_b, 0.5 if correlation is None else correlation)
    rows = []
    for trials in trial_counts:
        for paired in (True, False):
            rows.append(_row(design, tasks, trials, paired, args))
    return PowerReport(
        source=source,
        metric=metric,
        alpha=args.alpha,
        power=args.power,
        difference=args.difference,
        correlation=design.correlation,
        between_a=var_a.between,
        within_a=var_a.within,
        between_b=var_b.between,
        within_b=var_b.within,
        rows=rows,
        measured=pair,
    )


def _row(
    design: Design, tasks: int, trials: int, paired: bool, args: argparse.Namespace
) -> PowerRow:
    from todeval.stats.power import PowerRow, round_up

    detectable = design.detectable(
        tasks, trials, paired=paired, alpha=args.alpha, target=args.power
    )
    needed = None
    if args.difference is not None:
        needed = design.tasks_needed(
            args.difference, trials, paired=paired, alpha=args.alpha, target=args.power
        )
    return PowerRow(
        design="paired" if paired else "unpaired",
        tasks=tasks,
        trials=trials,
        sd=round(design.sd(trials, paired=paired), 6),
        detectable=round_up(detectable),
        tasks_needed=needed,
    )


def format_report(report: PowerReport) -> str:
    from todeval.console.tables import render_rows

    level = f"{round(report.power * 100)}% power, alpha {report.alpha:g}"
    header = ["design", "tasks", "trials", "sd of a unit", f"detectable difference ({level})"]
    if report.difference is not None:
        header.append(f"tasks for {report.difference:g}")
    rows = []
    for r in report.rows:
        row = [r.design, str(r.tasks), str(r.trials), f"{r.sd:.3f}", f"{r.detectable:.3f}"]
        if report.difference is not None:
            row.append("-" if r.tasks_needed is None else f"{r.tasks_needed:,}")
        rows.append(row)
    lines = [report.source + (f" ({report.metric})" if report.metric else ""), ""]
    lines.append(render_rows(header, rows))
    lines += [
        "",
        f"paired: both systems on the same tasks (todeval compare), a unit is a task's "
        f"difference; correlation of their task rates {report.correlation:.2f}. unpaired: "
        "separate task samples (tasks per system), a unit is one task's value.",
        f"task-rate variance A {report.between_a:.4f}, B {report.between_b:.4f}; per-episode "
        f"noise A {report.within_a:.4f}, B {report.within_b:.4f} (shrinks with trials)",
        "method: " + report.method,
    ]
    pair = report.measured
    if pair is not None:
        detectable = "not measurable" if pair.detectable is None else f"{pair.detectable:.3f}"
        lines[2:2] = [
            f"this pair as it is ({pair.tasks} shared tasks, as todeval compare pairs them): "
            f"A {pair.mean_a:.3f}, B {pair.mean_b:.3f}, B - A {pair.diff:+.3f}, sd of the task "
            f"differences {pair.sd:.3f}; detectable at this size: {detectable} ({level}; "
            "compare divides alpha among every metric it tests)",
            "",
        ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = build_report(args)
    print(format_report(report))
    if args.output:
        from todeval.core.files import write_output

        write_output(Path(args.output), report.model_dump_json(indent=2) + "\n")
    return 0


def register(registry: Registry) -> None:
    registry.add(
        "top",
        Command(
            "power",
            "how small a difference a comparison can detect, and how many tasks it needs",
            add_arguments,
            run,
        ),
    )
