"""Percentile bootstrap confidence intervals over tasks.

The resampling unit is the task: with several trials per task, a task contributes all its
episodes together, so trials of one task are never treated as independent evidence. The point
estimate is the plain mean over episodes (micro) or the mean of group means (macro).

For binary metrics (every value 0 or 1) the micro and per-group estimates also carry the 95%
Wilson score interval, a closed-form check. It assumes independent trials, so with several
trials per task it is taken over the effective sample size (``Estimate.n_effective``: tasks
when every trial of a task agrees), not over the correlated episodes.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from todeval.core.records import Estimate, MetricSummary
from todeval.stats.proportions import effective_n, is_binary, wilson_bounds, wilson_interval

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95


def seeded_rng(seed: int, label: str) -> np.random.Generator:
    """A generator determined by the run seed and a label (e.g. the metric's name)."""
    return np.random.default_rng([seed, zlib.crc32(label.encode())])


def interval(samples: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates."""
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _task_arrays(per_task: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    sums = np.array([float(sum(v)) for v in per_task], dtype=float)
    counts = np.array([len(v) for v in per_task], dtype=float)
    return sums, counts


def _resampled_means(
    sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, resamples: int
) -> np.ndarray:
    n = len(sums)
    idx = rng.integers(0, n, size=(resamples, n))
    return np.asarray(sums[idx].sum(axis=1) / counts[idx].sum(axis=1), dtype=float)


def bootstrap_mean(
    per_task: Sequence[Sequence[float]],
    *,
    seed: int,
    label: str = "",
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    wilson: bool | None = None,
) -> Estimate:
    """Mean over all episodes with a percentile-bootstrap CI resampling tasks.

    ``per_task`` holds, for each task, the metric's values over that task's episodes.
    ``wilson``: add the Wilson score interval (``None``: when every value is 0 or 1).
    """
    per_task = [v for v in per_task if len(v) > 0]
    if not per_task:
        return Estimate(value=None, n=0)
    if wilson is None:
        wilson = is_binary(x for v in per_task for x in v)
    sums, counts = _task_arrays(per_task)
    value = float(sums.sum() / counts.sum())
    n_episodes = int(counts.sum())
    clustered = bool(counts.max() > 1)  # some task has several trials
    n_eff = effective_n(list(sums), list(counts)) if clustered else None
    w_low: float | None = None
    w_high: float | None = None
    if wilson and n_eff is not None:
        w_low, w_high = wilson_bounds(value, n_eff, level)
    elif wilson:
        w_low, w_high = wilson_interval(round(float(sums.sum())), n_episodes, level)
    if len(per_task) < 2:
        low, high = value, value
    else:
        means = _resampled_means(sums, counts, seeded_rng(seed, label), resamples)
        low, high = interval(means, level)
    return Estimate(
        value=value,
        ci_low=low,
        ci_high=high,
        n=n_episodes,
        wilson_low=w_low,
        wilson_high=w_high,
        n_tasks=len(per_task) if clustered else None,
        n_effective=round(n_eff, 3) if n_eff is not None else None,
    )


def bootstrap_macro(
    per_group: Mapping[str, Sequence[Sequence[float]]],
    *,
    seed: int,
    label: str = "",
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Estimate:
    """Mean of group means over non-empty groups; each bootstrap resamples tasks within groups."""
    groups = {g: [v for v in tasks if len(v) > 0] for g, tasks in sorted(per_group.items())}
    groups = {g: tasks for g, tasks in groups.items() if tasks}
    if not groups:
        return Estimate(value=None, n=0)
    rng = seeded_rng(seed, "macro:" + label)
    point = []
    samples = np.zeros(resamples, dtype=float)
    for tasks in groups.values():
        sums, counts = _task_arrays(tasks)
        point.append(sums.sum() / counts.sum())
        samples += _resampled_means(sums, counts, rng, resamples)
    samples /= len(groups)
    value = float(np.mean(point))
    low, high = interval(samples, level)
    return Estimate(value=value, ci_low=low, ci_high=high, n=len(groups))


def summarize_metric(
    values: Mapping[str, Sequence[float]],
    groups: Mapping[str, str] | None,
    *,
    seed: int,
    label: str,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> MetricSummary:
    """Micro, macro and per-group estimates of one metric.

    If every value of the metric is 0 or 1, the micro and per-group estimates also carry the
    Wilson score interval (the macro estimate does not: it is no binomial proportion).

    ``values`` maps task id to the metric's values over that task's episodes; ``groups`` maps
    task id to its group (``None`` or empty: no macro average, no per-group figures).
    """
    task_ids = sorted(values)
    binary = is_binary(x for t in task_ids for x in values[t])
    micro = bootstrap_mean(
        [values[t] for t in task_ids],
        seed=seed,
        label=label,
        resamples=resamples,
        level=level,
        wilson=binary,
    )
    if not groups:
        return MetricSummary(micro=micro)
    per_group: dict[str, list[Sequence[float]]] = {}
    for t in task_ids:
        per_group.setdefault(groups.get(t, ""), []).append(values[t])
    by_group = {
        g: bootstrap_mean(
            tasks,
            seed=seed,
            label=f"{label}@{g}",
            resamples=resamples,
            level=level,
            wilson=binary,
        )
        for g, tasks in sorted(per_group.items())
    }
    macro = bootstrap_macro(per_group, seed=seed, label=label, resamples=resamples, level=level)
    return MetricSummary(micro=micro, macro=macro, by_group=by_group)
