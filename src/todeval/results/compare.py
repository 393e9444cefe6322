"""Paired comparison of runs over the tasks they share (``todeval compare``).

The first run is the baseline A; every other run B is compared with it. The pairing unit is
the task (with several trials, the task's mean in each run).

What makes two runs comparable is read from their manifests' typed identity
(:mod:`todeval.core.identity`), never from a benchmark's config keys: runs of different
benchmarks, task sets or protocols are refused, and so are runs over different selections of
one task set (other ids, limit, limit mode or draw) unless ``shared_tasks`` (``--shared-tasks``)
asks to compare them on the tasks both scored; the result then says how many were dropped. A
run written by 0.1.0 recorded no protocol (and a generation run no task set): it matches the
other run's, with a note.

The benchmark's profile (:mod:`todeval.results.profile`) decides how the result reads: its
primary metric comes first and carries each pair's :class:`Verdict` (better or worse by how
much, with the adjusted p; or no detectable difference and the difference detectable at this
size, :func:`todeval.stats.power.detectable_paired` at ``alpha / family``), and its ``better``
declarations give each metric's direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from todeval.core.records import Summary
from todeval.errors import RefusedError, UsageError
from todeval.results.comparison_record import (
    Comparison,
    ComparisonMethod,
    MetricComparison,
    Outcome,
    PairComparison,
    Ratio,
    RunInfo,
    Verdict,
)
from todeval.results.profile import BenchmarkProfile, ProfileBook
from todeval.results.rescore import refuse_mixed_versions, run_scorer_version
from todeval.results.runs import LoadedRun, load_run
from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES
from todeval.stats.multiplicity import ADJUSTMENT_NAMES, ADJUSTMENTS, Adjustment, adjust
from todeval.stats.paired import at_floor, paired_bootstrap
from todeval.stats.power import detectable_paired
from todeval.stats.proportions import is_binary, mcnemar_exact

POWER = 0.8
"""The power of the detectable differences compare reports."""

_COST_KEYS = ("usd_per_episode", "usd_per_success", "flop_usd_per_episode", "flop_usd_per_success")
_LATENCY_STATS = ("p50", "p90", "mean")


def _labels(paths: Sequence[Path]) -> list[str]:
    names = [p.name or str(p) for p in paths]
    return [n if names.count(n) == 1 else str(p) for n, p in zip(names, paths, strict=True)]


def _unrecorded(
    value_a: str | None, value_b: str | None, la: str, lb: str, what: str
) -> tuple[str | None, str | None, list[str]]:
    """A value one run (0.1.0) did not record takes the other run's, with a note."""
    if value_a is not None and value_b is not None:
        return value_a, value_b, []
    if value_a is None and value_b is None:
        return None, None, [f"neither run recorded a {what} (0.1.0 runs)"]
    missing, known = (la, value_b) if value_a is None else (lb, value_a)
    note = f"{missing} recorded no {what} (a 0.1.0 run): taken to match the other's {known!r}"
    return known, known, [note]


def check_comparable(
    a: LoadedRun, b: LoadedRun, la: str, lb: str, *, shared_tasks: bool
) -> tuple[list[str], list[str]]:
    """Refuse runs of different benchmarks, task sets, protocols, selections (unless
    ``shared_tasks``) or task contents; return (notes, the selection's differences)."""
    ma, mb = a.manifest, b.manifest
    if ma.benchmark != mb.benchmark:
        raise RefusedError(
            f"{lb} is a {mb.benchmark!r} run but the baseline {la} is "
            f"{ma.benchmark!r}; compare runs of one benchmark"
        )
    task_a, task_b, notes = _unrecorded(
        ma.selection.task_set, mb.selection.task_set, la, lb, "task set"
    )
    if task_a != task_b:
        raise RefusedError(
            f"{lb} and the baseline {la} differ in selection.task_set: {task_a!r} vs "
            f"{task_b!r}; compare runs on the same task set"
        )
    proto_a, proto_b, proto_notes = _unrecorded(ma.protocol, mb.protocol, la, lb, "protocol")
    notes += proto_notes
    if proto_a != proto_b:
        raise RefusedError(
            f"{lb} and the baseline {la} differ in protocol: {proto_a!r} vs {proto_b!r}; "
            "compare runs played under one protocol"
        )
    sel_a = ma.selection.model_copy(update={"task_set": task_a})
    sel_b = mb.selection.model_copy(update={"task_set": task_b})
    differences = sel_a.differences(sel_b)
    if differences and not shared_tasks:
        raise RefusedError(
            f"{lb} and the baseline {la} are over different selections "
            f"({'; '.join(differences)}); compare runs over the same tasks, or pass "
            "--shared-tasks to compare them on the tasks both scored"
        )
    same_content = ma.task_set_hash in (mb.task_set_hash, *mb.task_set_aliases) or (
        mb.task_set_hash in ma.task_set_aliases
    )
    if not differences and not same_content:
        raise RefusedError(
            f"{lb} and the baseline {la} selected the same tasks but their content differs "
            f"(task_set_hash {mb.task_set_hash} != {ma.task_set_hash})"
        )
    if differences:
        notes.append(
            f"selections differ ({'; '.join(differences)}): compared on the tasks both scored"
        )
    return notes, differences


def _config_diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, list[Any]]:
    return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def _metric(
    name: str,
    a: LoadedRun,
    b: LoadedRun,
    profile: BenchmarkProfile,
    *,
    seed: int,
    resamples: int,
    level: float,
) -> tuple[MetricComparison, list[float]] | None:
    va, vb = a.values.get(name, {}), b.values.get(name, {})
    tasks = sorted(set(va) & set(vb))
    if not tasks:
        return None
    xa = [sum(va[t]) / len(va[t]) for t in tasks]
    xb = [sum(vb[t]) / len(vb[t]) for t in tasks]
    est = paired_bootstrap(xa, xb, seed=seed, label=name, resamples=resamples, level=level)
    binary = is_binary(x for t in tasks for x in (*va[t], *vb[t]))
    mcnemar = None
    if binary and all(len(va[t]) == 1 and len(vb[t]) == 1 for t in tasks):
        b_count = sum(1 for x, y in zip(xa, xb, strict=True) if x == 1.0 and y == 0.0)
        c_count = sum(1 for x, y in zip(xa, xb, strict=True) if x == 0.0 and y == 1.0)
        mcnemar = mcnemar_exact(b_count, c_count)
    metric = MetricComparison(
        metric=name,
        title=profile.metric_title(name),
        primary=name == profile.primary,
        better=profile.better_direction(name),
        n_tasks=est.n,
        mean_a=est.mean_a,
        mean_b=est.mean_b,
        diff=est.diff,
        ci_low=est.ci_low,
        ci_high=est.ci_high,
        p_value=est.p_value,
        p_at_floor=est.n > 1 and at_floor(est.p_value, resamples),
        binary=binary,
        mcnemar=mcnemar,
    )
    return metric, [y - x for x, y in zip(xa, xb, strict=True)]


def _scored(summary: Summary) -> int:
    return summary.n_episodes - sum(summary.excluded.values())


def _summary_figures(s: Summary) -> dict[str, float]:
    """Cost and latency figures of one summary (only those present)."""
    out: dict[str, float] = {}
    for key in _COST_KEYS:
        value = s.cost.get(key)
        if value is not None:
            out[f"cost.{key}"] = value
    n = _scored(s)
    tokens = s.cost.get("tokens_total")
    if tokens is not None and n > 0:
        out["cost.tokens_per_episode"] = tokens / n
    for role, usage in s.usage.items():
        if n > 0:
            out[f"usage.{role}.calls_per_episode"] = usage.calls / n
            out[f"usage.{role}.latency_s_per_episode"] = usage.latency_s / n
    for role, stats in s.latency.items():
        for stat in _LATENCY_STATS:
            if stat in stats:
                out[f"latency.{role}.{stat}"] = stats[stat]
    return out


def _ratios(a: Summary | None, b: Summary | None) -> list[Ratio]:
    if a is None or b is None:
        return []
    fa, fb = _summary_figures(a), _summary_figures(b)
    out = []
    for name in sorted(set(fa) | set(fb)):
        x, y = fa.get(name), fb.get(name)
        if not x and not y:  # 0 or unrecorded in both: nothing to compare
            continue
        ratio = y / x if x and y is not None else None
        out.append(Ratio(name=name, a=x, b=y, ratio=ratio))
    return out


def ordered(names: Sequence[str], profile: BenchmarkProfile) -> list[str]:
    """``names`` with the profile's primary metric first, then its leaderboard columns' metrics
    in their order, then the rest by name."""
    rank = {profile.primary: 0}
    for column in profile.columns:
        rank.setdefault(column.metric, len(rank))
    return sorted(names, key=lambda name: (rank.get(name, len(rank)), name))


def _pair(
    a: LoadedRun,
    b: LoadedRun,
    la: str,
    lb: str,
    metrics: Sequence[str] | None,
    profile: BenchmarkProfile,
    *,
    seed: int,
    resamples: int,
    level: float,
    shared_tasks: bool,
) -> tuple[PairComparison, list[list[float]]]:
    notes, differences = check_comparable(a, b, la, lb, shared_tasks=shared_tasks)
    shared = a.tasks & b.tasks
    if not shared:
        raise RefusedError(f"{lb} and the baseline {la} share no scored tasks")
    common = sorted(set(a.values) & set(b.values))
    if metrics is None:
        names = ordered(common, profile)
    else:  # the caller's order, the primary first
        names = sorted(metrics, key=lambda name: name != profile.primary)
    for name in names:
        if name not in common:
            raise UsageError(
                f"metric {name!r} is not in both {la} and {lb}; valid choices: {', '.join(common)}"
            )
    one_sided = sorted(set(a.values) ^ set(b.values))
    if metrics is None and one_sided:
        notes.append(f"metrics in only one run (not compared): {', '.join(one_sided)}")
    if max(a.max_trials, b.max_trials) > 1:
        notes.append("several trials per task: tasks compared by their mean; no McNemar test")
    for run, label in ((a, la), (b, lb)):
        if run.n_excluded:
            notes.append(f"{label}: {run.n_excluded} episodes left out (do not count in metrics)")
    results = [
        m
        for name in names
        if (m := _metric(name, a, b, profile, seed=seed, resamples=resamples, level=level))
        is not None
    ]
    if a.summary is None or b.summary is None:
        notes.append("no cost/latency ratios: a run has no readable summary.json")
    pair = PairComparison(
        baseline=la,
        run=lb,
        shared_tasks=len(shared),
        dropped_baseline_only=len(a.tasks - b.tasks),
        dropped_run_only=len(b.tasks - a.tasks),
        selection_diff=differences,
        config_diff=_config_diff(a.manifest.config, b.manifest.config),
        metrics=[m for m, _ in results],
        ratios=_ratios(a.summary, b.summary),
        notes=notes,
    )
    return pair, [d for _, d in results]


def _number(value: float) -> str:
    return f"{value:.3f}"


def p_text(p: float, bound: bool) -> str:
    """A p-value for running text: three decimals (two digits below 0.001), ``<= x`` for a
    bound."""
    shown = f"{p:.3f}" if p >= 0.001 else f"{p:.2g}"
    return f"<= {shown}" if bound else shown


def reading(m: MetricComparison) -> Outcome | None:
    """How B reads against A on ``m`` where the difference is significant: better / worse in a
    declared direction, else higher / lower; None where no difference was detected."""
    if not m.significant:
        return None
    up = m.diff > 0
    if m.better in ("higher", "lower"):
        return "better" if up == (m.better == "higher") else "worse"
    return "higher" if up else "lower"


def verdict(m: MetricComparison, adjustment: Adjustment, alpha: float, family: int) -> Verdict:
    """The verdict on one metric of one pair: which run is better, by how much, how sure; or
    that no difference was detected, and the smallest one this comparison could detect."""
    p = m.p_adjusted if m.p_adjusted is not None else m.p_value
    bound = m.p_adjusted_bound if m.p_adjusted is not None else m.p_at_floor
    p_name = f"{ADJUSTMENT_NAMES[adjustment]} p".lstrip()
    title = m.title or m.metric
    if not m.significant:
        detectable = (
            "not measurable (B - A is the same on every task)"
            if m.detectable is None
            else _number(m.detectable)
        )
        text = (
            f"no detectable difference on {title}: B - A {m.diff:+.3f} "
            f"[{m.ci_low:+.3f}, {m.ci_high:+.3f}], {p_name} {p_text(p, bound)} (not below "
            f"{alpha:g}"
        )
        if adjustment != "none" and (m.ci_low > 0 or m.ci_high < 0):
            # the CI is not adjusted: say why it excludes 0 while the verdict finds nothing
            text += f"; the CI excludes 0 before adjusting for the {family} tests, not after"
        text += f"); detectable at this size: {detectable}"
        outcome = "no_difference"
    else:
        outcome = reading(m) or "no_difference"
        up = m.diff > 0
        low, high = (m.ci_low, m.ci_high) if up else (-m.ci_high, -m.ci_low)
        direction = {
            "higher": "",
            "lower": " (lower is better)",
            "neither": " (neither way is better)",
            None: " (no better direction declared)",
        }[m.better]
        text = (
            f"B is {outcome} than A on {title}{direction} by {_number(abs(m.diff))} "
            f"[{_number(low)}, {_number(high)}], {p_name} {p_text(p, bound)}"
        )
    return Verdict(
        metric=m.metric,
        title=title,
        better=m.better,
        outcome=outcome,
        diff=m.diff,
        ci_low=m.ci_low,
        ci_high=m.ci_high,
        p_adjusted=p,
        p_adjusted_bound=bound,
        detectable=m.detectable,
        text=text,
    )


def profile_of(benchmark: str, summaries: Sequence[Summary | None] = ()) -> BenchmarkProfile:
    """The benchmark's registered profile (a generic one when it registered none)."""
    from todeval.registry import discover

    present = [s for s in summaries if s is not None]
    return ProfileBook(discover().profiles).get(benchmark, present)


def _info(run: LoadedRun, label: str) -> RunInfo:
    return RunInfo(
        label=label,
        path=str(run.path),
        benchmark=run.manifest.benchmark,
        task_set=run.task_set,
        roles={role: identity.label for role, identity in run.manifest.roles.items()},
        role_config_keys=sorted(
            {key for identity in run.manifest.roles.values() for key in identity.config_keys}
        ),
        selection=run.manifest.selection.label,
        protocol=run.manifest.protocol,
        config_hash=run.manifest.config_hash,
        task_set_hash=run.manifest.task_set_hash,
        n_tasks=len(run.tasks),
        n_episodes=run.n_episodes,
        n_excluded=run.n_excluded,
        max_trials=run.max_trials,
    )


def compare_runs(
    paths: Sequence[str | Path],
    *,
    metrics: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    shared_tasks: bool = False,
    adjustment: Adjustment = "holm",
    profile: BenchmarkProfile | None = None,
) -> Comparison:
    """Compare every run with the first (the baseline) over the tasks they share.

    Every bootstrap p-value (each run against the baseline, on each metric) is one test of a
    family: ``p_adjusted`` corrects it by ``adjustment`` (:mod:`todeval.stats.multiplicity`).
    The benchmark's ``profile`` (default: the registered one) names the primary metric, which
    comes first and carries each pair's verdict, and the better direction of each metric.

    ``shared_tasks`` compares runs over different selections of one task set on the tasks both
    scored (otherwise they are refused).

    Raises :class:`UsageError` for fewer than two runs, bad options or an unknown metric,
    :class:`BadInputError` for a missing or malformed run directory, and
    :class:`RefusedError` for runs of different benchmarks, task sets, protocols or (without
    ``shared_tasks``) selections, or with no shared task; the message names the differing
    fields and their values. Deterministic for a given ``seed``.
    """
    if len(paths) < 2:
        raise UsageError("compare needs at least two runs (the first is the baseline)")
    if resamples < 1:
        raise UsageError("--resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise UsageError("the level must lie between 0 and 1")
    run_paths = [Path(p) for p in paths]
    labels = _labels(run_paths)
    runs = [load_run(p) for p in run_paths]
    refuse_mixed_versions(  # runs graded by different scorer versions are not comparable
        [
            (label, run.manifest.benchmark, run_scorer_version(run.path, run.summary))
            for label, run in zip(labels, runs, strict=True)
        ]
    )
    base, base_label = runs[0], labels[0]
    if adjustment not in ADJUSTMENTS:
        raise UsageError(f"unknown adjustment {adjustment!r}; valid: {', '.join(ADJUSTMENTS)}")
    if profile is None:
        profile = profile_of(base.manifest.benchmark, [r.summary for r in runs])
    done = [
        _pair(
            base,
            run,
            base_label,
            label,
            metrics,
            profile,
            seed=seed,
            resamples=resamples,
            level=level,
            shared_tasks=shared_tasks,
        )
        for run, label in zip(runs[1:], labels[1:], strict=True)
    ]
    pairs = [pair for pair, _ in done]
    family = [m for pair in pairs for m in pair.metrics]
    differences = [d for _, diffs in done for d in diffs]
    raw = [m.p_value for m in family]
    adjusted = adjust(raw, adjustment)
    # a p at the bootstrap's floor is a bound: adjusted with it at 0, does any p move?
    lowest = adjust([0.0 if m.p_at_floor else m.p_value for m in family], adjustment)
    alpha = round(1.0 - level, 12)
    alpha_adjusted = alpha / len(family) if adjustment != "none" and family else alpha
    for m, p, low, d in zip(family, adjusted, lowest, differences, strict=True):
        m.p_adjusted = p
        m.p_adjusted_bound = low < p
        m.significant = p < alpha
        # the 0/1 floor holds where each task is one 0/1 pair (McNemar's case)
        one_pair = m.mcnemar is not None
        m.detectable = detectable_paired(d, binary=one_pair, alpha=alpha_adjusted, target=POWER)
    for pair in pairs:
        primary = next((m for m in pair.metrics if m.primary), None)
        if primary is not None:
            pair.verdict = verdict(primary, adjustment, alpha, len(family))
    method = ComparisonMethod(
        level=level,
        resamples=resamples,
        seed=seed,
        adjustment=adjustment,
        family=len(family),
        alpha=alpha,
        alpha_adjusted=alpha_adjusted,
        power=POWER,
        primary=profile.primary or None,
    )
    return Comparison(
        benchmark=base.manifest.benchmark,
        task_set=base.task_set,
        baseline=base_label,
        runs=[_info(r, lab) for r, lab in zip(runs, labels, strict=True)],
        method=method,
        pairs=pairs,
    )
