"""Several trials per task: which tasks are stable, and how much of the spread is the trials'.

* **Consistency** (0/1 metrics): a task is ``always`` solved (every trial 1), ``never`` (every
  trial 0) or ``flaky`` (both). The flaky share is what a single-trial run gets by luck.
* **Variance split**: the variance of one episode's value is the spread of the task means
  (``between``: tasks differ in difficulty) plus the spread of trials around their task's mean
  (``within``: sampling noise of the system or simulator). ``within_share`` =
  ``within / (between + within)`` (1 - the intra-task correlation), with a percentile-bootstrap
  interval over tasks. Near 0: trials repeat each other and more of them buy little; near 1:
  one trial per task is mostly noise.

``within`` is the pooled unbiased variance of trials around their task mean; ``between`` is the
variance of the task means less the part the trials' noise contributes to it
(``within x mean(1 / trials)``), floored at 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from todeval.core.records import Consistency, VarianceSplit
from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, interval, seeded_rng


def consistency(metric: str, per_task: Mapping[str, Sequence[float]]) -> Consistency:
    """Always / never / flaky counts of a 0/1 metric's tasks (tasks with one trial count by
    their one value: always or never)."""
    always = never = 0
    flaky: list[str] = []
    for task, values in sorted(per_task.items()):
        if not values:
            continue
        if all(v == 1.0 for v in values):
            always += 1
        elif all(v == 0.0 for v in values):
            never += 1
        else:
            flaky.append(task)
    return Consistency(
        metric=metric, always=always, never=never, flaky=len(flaky), flaky_tasks=flaky
    )


def _components(
    sums: np.ndarray, squares: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(between, within) for each row of task-level sums, sums of squares and counts (the last
    axis runs over tasks)."""
    means = sums / counts
    ss_within = (squares - sums * means).sum(axis=-1)
    df_within = (counts - 1).sum(axis=-1)
    within = np.where(df_within > 0, ss_within / np.maximum(df_within, 1), 0.0)
    k = means.shape[-1]
    spread = means.var(axis=-1, ddof=1) if k > 1 else np.zeros_like(within)
    between = np.maximum(0.0, spread - within * (1.0 / counts).mean(axis=-1))
    return between, np.maximum(within, 0.0)


def variance_split(
    metric: str,
    per_task: Sequence[Sequence[float]],
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> VarianceSplit:
    """The variance split of one metric with a bootstrap interval (tasks resampled)."""
    tasks = [list(v) for v in per_task if len(v) > 0]
    sums = np.array([sum(v) for v in tasks], dtype=float)
    squares = np.array([sum(x * x for x in v) for v in tasks], dtype=float)
    counts = np.array([len(v) for v in tasks], dtype=float)
    between, within = (float(x) for x in _components(sums, squares, counts))
    total = between + within
    share = within / total if total > 0 else None
    low = high = None
    if share is not None and len(tasks) > 1:
        idx = seeded_rng(seed, "trials:" + metric).integers(0, len(tasks), (resamples, len(tasks)))
        b, w = _components(sums[idx], squares[idx], counts[idx])
        shares = np.divide(w, b + w, out=np.full_like(w, np.nan), where=(b + w) > 0)
        shares = shares[~np.isnan(shares)]
        if len(shares):
            low, high = interval(shares, level)
    return VarianceSplit(
        metric=metric, between=between, within=within, within_share=share, ci_low=low, ci_high=high
    )


__all__ = [
    "consistency",
    "variance_split",
]
