"""Ranks and Kendall's tau-b, for comparing system rankings across user simulators."""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
"""Values per run (rows) and task (columns), as :func:`rank_intervals` takes them."""


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
    per_run: Sequence[Sequence[float]] | FloatArray,
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
    means = resampled_means(values, idx)  # runs x resamples
    # a run's rank in a resample: 1 + the runs strictly better (sorted, not compared pairwise)
    ranks = np.empty_like(means, dtype=np.int64)
    for b in range(means.shape[1]):
        column = means[:, b]
        ranks[:, b] = 1 + runs - np.searchsorted(np.sort(column), column, side="right")
    alpha = (1.0 - level) / 2.0
    low = np.floor(np.quantile(ranks, alpha, axis=1, method="lower"))
    high = np.ceil(np.quantile(ranks, 1.0 - alpha, axis=1, method="higher"))
    return [(int(lo), int(hi)) for lo, hi in zip(low, high, strict=True)]


_CHUNK_CELLS = 1 << 21  # resample-count cells per block (16 MB of float64)


def resampled_means(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``values[:, idx].mean(axis=2)`` (runs x resamples) without the runs x resamples x
    tasks array: each block of resamples becomes a matrix of how often it drew each task, and
    the means are one matrix product. Memory stays bounded at any number of runs (1,000 runs
    x 1,000 tasks x 2,000 resamples would otherwise take 16 GB)."""
    runs, tasks = values.shape
    resamples, draws = idx.shape
    out = np.empty((runs, resamples), dtype=float)
    step = max(1, _CHUNK_CELLS // max(1, tasks))
    for lo in range(0, resamples, step):
        block = idx[lo : lo + step]
        n = len(block)
        flat = (np.arange(n)[:, None] * tasks + block).ravel()
        counts = np.bincount(flat, minlength=n * tasks).reshape(n, tasks).astype(float)
        out[:, lo : lo + n] = (values @ counts.T) / draws
    return out


def significance_tiers(
    per_run: Sequence[Sequence[float]] | FloatArray,
    *,
    seed: int = 0,
    resamples: int = 2000,
    level: float = 0.95,
) -> list[int]:
    """Tier of each run (1 = best): runs in the order of their means; a run joins the current
    tier unless the paired bootstrap interval of its difference to the tier's first run (over
    the shared tasks) excludes 0, in which case it opens the next tier. Runs of one tier cannot
    be told apart from its leader at ``level``."""
    from todeval.stats.bootstrap import interval, seeded_rng

    # one array per run (no Python float per value: 1,000 runs x 1,000 tasks would be 32 MB)
    values = [np.asarray(v, dtype=float) for v in per_run]
    if not values:
        return []
    means = [sum(v.tolist()) / len(v) if len(v) else 0.0 for v in values]
    order = sorted(range(len(values)), key=lambda r: -means[r])
    tiers = [0] * len(values)
    tier, leader = 1, order[0]
    tiers[leader] = tier
    # every pair is resampled with the draws of paired_bootstrap(seed, "tiers"): the same for
    # every pair of a length, so each run's resampled means are computed once
    boot: dict[int, np.ndarray] = {}
    for n in {len(v) for v in values if len(v) >= 2}:
        rows = [r for r, v in enumerate(values) if len(v) == n]
        idx = seeded_rng(seed, "paired:tiers").integers(0, n, size=(resamples, n))
        block = resampled_means(np.stack([values[r] for r in rows]), idx)
        boot.update({r: block[k] for k, r in enumerate(rows)})
    for r in order[1:]:
        if len(values[r]) >= 2 and len(values[r]) == len(values[leader]):
            low, high = interval(boot[r] - boot[leader], level)
            separated = high < 0.0 or low > 0.0
        elif len(values[r]) >= 2:
            raise ValueError("a and b must pair up (same length)")
        else:
            separated = means[r] != means[leader]
        if separated:
            tier, leader = tier + 1, r
        tiers[r] = tier
    return tiers
