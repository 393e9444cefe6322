"""The agreement statistics of :mod:`.agreement` for many bootstrap resamples at once.

A resample of items is a row of item weights (how often each item was drawn); every
statistic here is a ratio of weighted sums over items, so ``W @ per_item`` gives all the
replicates in one product. With one row of ones they are the plain statistics (tested
against :mod:`.agreement`, which is tested against the reference libraries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

LabelSet = frozenset[str]
Ratings = Mapping[str, Mapping[str, LabelSet]]

_EPS = 1e-12


def resample_weights(n: int, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """``resamples`` x ``n`` draw counts of ``n`` items drawn with replacement."""
    idx = rng.integers(0, n, size=(resamples, n))
    weights = np.zeros((resamples, n), dtype=float)
    rows = np.repeat(np.arange(resamples), n)
    np.add.at(weights, (rows, idx.ravel()), 1.0)
    return weights


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def binary_matrix(
    ratings: Ratings, items: Sequence[str], coders: Sequence[str], label: str
) -> np.ndarray:
    """items x coders: 1.0 / 0.0 for the label chosen or not, nan where no answer."""
    return np.array(
        [
            [float(label in ratings[i][c]) if c in ratings[i] else np.nan for c in coders]
            for i in items
        ],
        dtype=float,
    ).reshape(len(items), len(coders))


def cohen_binary(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cohen's kappa of two binary columns (nan: missing) for each weight row."""
    both = ~np.isnan(x) & ~np.isnan(y)
    xv, yv, m = np.where(both, x, 0.0), np.where(both, y, 0.0), both.astype(float)
    n = weights @ m
    po = _div(weights @ (m * (xv == yv)), n)
    pa, pb = _div(weights @ xv, n), _div(weights @ yv, n)
    pe = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1 - _EPS, (po - pe) / (1 - pe), np.nan)


def mean_pairwise_cohen(weights: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    coders = matrix.shape[1]
    pairs = []
    for a in range(coders):
        for b in range(a + 1, coders):
            shared = ~np.isnan(matrix[:, a]) & ~np.isnan(matrix[:, b])
            if shared.any():
                pairs.append(cohen_binary(weights, matrix[:, a], matrix[:, b]))
    if not pairs:
        return np.full(weights.shape[0], np.nan)
    return np.asarray(np.mean(np.stack(pairs), axis=0), dtype=float)


def fleiss_binary(weights: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    k = matrix.shape[1]
    full = (~np.isnan(matrix)).all(axis=1).astype(float)
    if k < 2 or not full.any():
        return np.full(weights.shape[0], np.nan)
    yes = np.nan_to_num(matrix).sum(axis=1)
    no = k - yes
    p_item = (yes * yes + no * no - k) / (k * (k - 1))
    n = weights @ full
    p_yes = _div(weights @ (full * yes), n * k)
    p_bar = _div(weights @ (full * p_item), n)
    pe = p_yes * p_yes + (1 - p_yes) * (1 - p_yes)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1 - _EPS, (p_bar - pe) / (1 - pe), np.nan)


def alpha_values(
    weights: np.ndarray,
    units: Sequence[Sequence[object]],
    distance: Callable[[object, object], float],
) -> np.ndarray:
    """Krippendorff's alpha (any distance) over units of values, for each weight row."""
    values: dict[object, int] = {}
    for u in units:
        for v in u:
            values.setdefault(v, len(values))
    counts = np.zeros((len(units), max(len(values), 1)), dtype=float)
    for i, u in enumerate(units):
        if len(u) >= 2:
            for v in u:
                counts[i, values[v]] += 1.0
    keys = list(values)
    dist = np.array([[distance(a, b) for b in keys] for a in keys], dtype=float).reshape(
        len(keys), len(keys)
    )
    if not keys:
        return np.full(weights.shape[0], np.nan)
    m = counts.sum(axis=1)
    pair = np.einsum("ij,jk,ik->i", counts, dist, counts)
    observed_item = np.where(m >= 2, pair / np.where(m >= 2, m - 1, 1.0), 0.0)
    n = weights @ m
    observed = _div(weights @ observed_item, n)
    totals = weights @ counts
    expected = _div(np.einsum("rj,jk,rk->r", totals, dist, totals), n * (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((expected > _EPS) & (n >= 2), 1.0 - observed / expected, np.nan)
    return np.asarray(out, dtype=float)


def share(weights: np.ndarray, hits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _div(weights @ (hits * mask), weights @ mask)
