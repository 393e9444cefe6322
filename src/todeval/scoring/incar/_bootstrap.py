"""Percentile-bootstrap CIs for corpus-level metrics, resampling dialogues.

A corpus metric (BLEU, micro F1, Combined) is not a mean of per-dialogue values, so each
resample draws dialogues with replacement, sums their cached sufficient statistics and
recomputes the metric. Seeding follows :mod:`todeval.stats` (``seed`` plus a CRC of the metric
label), so a run is reproducible. Micro: all dialogues; by group: within each group; macro: the
mean of group values, each group resampled on its own.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np

from todeval.core.records import Estimate, MetricSummary
from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES

Statistic = Callable[[np.ndarray], np.ndarray]
"""Maps summed statistics, shape (rows, k), to one metric value per row (NaN: undefined)."""


def _rng(seed: int, label: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(label.encode())])


def _value(stats: np.ndarray, statistic: Statistic) -> float | None:
    value = float(statistic(stats.sum(axis=0, keepdims=True))[0])
    return None if np.isnan(value) else value


def _resampled(
    stats: np.ndarray, statistic: Statistic, rng: np.random.Generator, resamples: int
) -> np.ndarray:
    n = len(stats)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(float)
    return np.asarray(statistic(counts @ stats), dtype=float)


def _interval(samples: np.ndarray, level: float) -> tuple[float | None, float | None]:
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return None, None
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(low), float(high)


def corpus_estimate(
    stats: np.ndarray,
    statistic: Statistic,
    *,
    seed: int,
    label: str,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Estimate:
    """Point value and CI of a corpus metric over the rows (dialogues) of ``stats``."""
    if len(stats) == 0:
        return Estimate(value=None, n=0)
    value = _value(stats, statistic)
    if len(stats) < 2 or value is None:
        return Estimate(value=value, ci_low=value, ci_high=value, n=len(stats))
    low, high = _interval(_resampled(stats, statistic, _rng(seed, label), resamples), level)
    return Estimate(value=value, ci_low=low, ci_high=high, n=len(stats))


def corpus_summary(
    stats: np.ndarray,
    groups: Sequence[str],
    statistic: Statistic,
    *,
    seed: int,
    label: str,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> MetricSummary:
    """Micro, per-group and macro estimates of a corpus metric."""

    def estimate(rows: np.ndarray, name: str) -> Estimate:
        return corpus_estimate(
            rows, statistic, seed=seed, label=name, resamples=resamples, level=level
        )

    micro = estimate(stats, label)
    names = sorted(set(groups))
    members = {g: stats[[i for i, x in enumerate(groups) if x == g]] for g in names}
    by_group = {g: estimate(rows, f"{label}@{g}") for g, rows in members.items()}
    values = [e.value for e in by_group.values() if e.value is not None]
    if not values:
        return MetricSummary(micro=micro, by_group=by_group)
    rng = _rng(seed, "macro:" + label)
    total = np.zeros(resamples)
    for g, rows in members.items():
        if by_group[g].value is None:
            continue
        total += _resampled(rows, statistic, rng, resamples)
    low, high = _interval(total / len(values), level)
    macro = Estimate(value=float(np.mean(values)), ci_low=low, ci_high=high, n=len(values))
    return MetricSummary(micro=micro, macro=macro, by_group=by_group)
