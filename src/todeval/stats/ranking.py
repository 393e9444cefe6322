"""Ranks and Kendall's tau-b, for comparing system rankings across user simulators."""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt

import numpy as np


def rank(values: Sequence[float], *, descending: bool = False) -> list[float]:
    """1-based ranks, ties sharing the average of the ranks they span.

    ``descending=True`` gives rank 1 to the largest value (a leaderboard's order).
    """
    arr = np.asarray(values, dtype=float)
    if descending:
        arr = -arr
    order = np.argsort(arr, kind="stable")
    ranks = np.empty(len(arr), dtype=float)
    i = 0
    while i < len(arr):
        j = i
        while j + 1 < len(arr) and arr[order[j + 1]] == arr[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return [float(r) for r in ranks]


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b between two paired sequences (ties handled as in tau-b).

    ``tau_b = (C - D) / sqrt((n0 - t_x) (n0 - t_y))`` with C and D the concordant and
    discordant pairs, ``n0 = n (n - 1) / 2``, and ``t_x``, ``t_y`` the pairs tied in x and in
    y. ``None`` when it is undefined (fewer than two items, or one sequence constant).
    """
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    n = len(x)
    if n < 2:
        return None
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    upper = np.triu_indices(n, k=1)
    dx = np.sign(a[:, None] - a[None, :])[upper]
    dy = np.sign(b[:, None] - b[None, :])[upper]
    n0 = len(dx)
    tied_x = int(np.count_nonzero(dx == 0))
    tied_y = int(np.count_nonzero(dy == 0))
    denominator = sqrt(float(n0 - tied_x) * float(n0 - tied_y))
    if denominator == 0.0:
        return None
    return float(np.sum(dx * dy)) / denominator


def rank_intervals(
    per_run: Sequence[Sequence[float]],
    *,
    seed: int = 0,
    resamples: int = 2000,
    level: float = 0.95,
) -> list[tuple[int, int]]:
    """For each run, the range of ranks it takes in ``level`` of paired bootstrap resamples.

    ``per_run[r][i]`` is run ``r``'s value on shared task ``i`` (higher is better); every
    resample draws the same tasks for all runs, and a run's rank in it is 1 + the number of
    runs strictly better (ties share the better rank). The interval is the percentile interval
    of those ranks, so ``(1, 1)`` means the run was first in nearly every resample.
    """
    from todeval.stats.bootstrap import seeded_rng

    values = np.asarray(per_run, dtype=float)
    runs, tasks = values.shape
    if runs == 0:
        return []
    if tasks < 2:
        point = rank([float(v) for v in values.mean(axis=1)], descending=True)
        return [(int(r), int(r)) for r in point]
    idx = seeded_rng(seed, "rank-intervals").integers(0, tasks, size=(resamples, tasks))
    means = values[:, idx].mean(axis=2)  # runs x resamples
    better = (means[None, :, :] > means[:, None, :]).sum(axis=1)  # runs x resamples
    ranks = 1 + better
    alpha = (1.0 - level) / 2.0
    low = np.floor(np.quantile(ranks, alpha, axis=1, method="lower"))
    high = np.ceil(np.quantile(ranks, 1.0 - alpha, axis=1, method="higher"))
    return [(int(lo), int(hi)) for lo, hi in zip(low, high, strict=True)]


def significance_tiers(
    per_run: Sequence[Sequence[float]],
    *,
    seed: int = 0,
    resamples: int = 2000,
    level: float = 0.95,
) -> list[int]:
    """Tier of each run (1 = best): runs in the order of their means; a run joins the current
    tier unless the paired bootstrap interval of its difference to the tier's first run (over
    the shared tasks) excludes 0, in which case it opens the next tier. Runs of one tier cannot
    be told apart from its leader at ``level``."""
    from todeval.stats.paired import paired_bootstrap

    values = [list(map(float, v)) for v in per_run]
    if not values:
        return []
    means = [sum(v) / len(v) if v else 0.0 for v in values]
    order = sorted(range(len(values)), key=lambda r: -means[r])
    tiers = [0] * len(values)
    tier, leader = 1, order[0]
    tiers[leader] = tier
    for r in order[1:]:
        if len(values[r]) >= 2:
            diff = paired_bootstrap(
                values[leader],
                values[r],
                seed=seed,
                label="tiers",
                resamples=resamples,
                level=level,
            )
            separated = diff.ci_high < 0.0 or diff.ci_low > 0.0
        else:
            separated = means[r] != means[leader]
        if separated:
            tier, leader = tier + 1, r
        tiers[r] = tier
    return tiers
