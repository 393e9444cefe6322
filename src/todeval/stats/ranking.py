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
