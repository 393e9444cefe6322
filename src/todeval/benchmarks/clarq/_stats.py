"""A percentile bootstrap that resamples clusters (task types) instead of tasks.

The ten tasks of one ClarQ type share a scenario template, so they are not independent
evidence: a resample draws task types with replacement and takes every episode of each drawn
type; the statistic is the episode mean of the resample (a ratio estimator, so types with
more episodes weigh more, as in the point estimate). Seeding follows :mod:`todeval.stats`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from todeval.core.records import Estimate
from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, interval, seeded_rng
from todeval.stats.proportions import wilson_interval


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence[str],
    *,
    seed: int,
    label: str,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    wilson: bool = False,
) -> Estimate:
    """Mean of ``values`` with a CI from resampling ``clusters`` (one label per value).

    ``wilson``: also give the Wilson score interval (for 0/1 values; it treats episodes as
    independent, so it is narrower than the cluster interval when clusters matter).
    """
    if len(values) != len(clusters):
        raise ValueError("one cluster label per value")
    if not values:
        return Estimate(value=None, n=0)
    names = sorted(set(clusters))
    where = {name: i for i, name in enumerate(names)}
    sums = np.zeros(len(names))
    counts = np.zeros(len(names))
    for value, cluster in zip(values, clusters, strict=True):
        sums[where[cluster]] += value
        counts[where[cluster]] += 1
    n = len(values)
    point = float(sums.sum() / n)
    w_low, w_high = (None, None)
    if wilson:
        w_low, w_high = wilson_interval(round(float(sums.sum())), n, level)
    if len(names) < 2:
        return Estimate(
            value=point, ci_low=point, ci_high=point, n=n, wilson_low=w_low, wilson_high=w_high
        )
    rng = seeded_rng(seed, label)
    idx = rng.integers(0, len(names), size=(resamples, len(names)))
    means = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    low, high = interval(np.asarray(means, dtype=float), level)
    return Estimate(
        value=point, ci_low=low, ci_high=high, n=n, wilson_low=w_low, wilson_high=w_high
    )


__all__ = ["cluster_bootstrap"]
