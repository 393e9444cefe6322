"""Percentile bootstrap over dialogues with one shared set of resamples.

Every metric of a file is a function of per-dialogue sums (Inform hits, BLEU statistics, token
counts, DST counts). One matrix ``W`` of resample weights (how often each dialogue was drawn in
each resample) turns all of them into resampled sums with a single matrix product; corpus-level
metrics (BLEU, Combined, slot precision/recall/F1, per-domain rates) are then recomputed per
resample from those sums. This is the method of :mod:`todeval.stats` (percentile bootstrap over
units, 2000 resamples, seeded) with the resamples shared across metrics, so e.g. the Combined
interval is consistent with the Inform, Success and BLEU ones.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

from todeval.core.records import Estimate


class DialogueBootstrap:
    """Resampled sums of named per-dialogue columns.

    Register columns with :meth:`add`, then read resampled sums with :meth:`sums` (the matrix
    product is done once, on first read). With fewer than two dialogues there is nothing to
    resample: intervals collapse to the point value.
    """

    def __init__(self, n: int, *, seed: int, resamples: int, level: float, label: str) -> None:
        self.n = n
        self.level = level
        self.resamples = resamples
        self.seed = seed
        self.label = label
        self.active = n >= 2
        self._columns: dict[str, list[float]] = {}
        self._sums: dict[str, Any] | None = None

    def add(self, name: str, values: Sequence[float]) -> None:
        """Register a per-dialogue column (one value per dialogue)."""
        if len(values) != self.n:
            raise ValueError(f"column {name!r} has {len(values)} values for {self.n} dialogues")
        self._columns[name] = [float(v) for v in values]
        self._sums = None

    def _resample(self) -> dict[str, Any]:
        import numpy as np

        rng = np.random.default_rng([self.seed, zlib.crc32(self.label.encode())])
        idx = rng.integers(0, self.n, size=(self.resamples, self.n))
        idx += np.arange(self.resamples)[:, None] * self.n
        weights = np.bincount(idx.ravel(), minlength=self.resamples * self.n)
        weights = weights.reshape(self.resamples, self.n).astype(float)
        names = list(self._columns)
        matrix = np.array([self._columns[k] for k in names], dtype=float).T
        sums = weights @ matrix
        return {name: sums[:, i] for i, name in enumerate(names)}

    def sums(self, name: str) -> Any:
        """Resampled sums ``(resamples,)`` of a registered column."""
        if self._sums is None:
            self._sums = self._resample()
        return self._sums[name]

    def ratio(self, numerator: str, denominator: str) -> Any:
        """Resampled ``sum(numerator) / sum(denominator)`` (NaN where the denominator is 0)."""
        import numpy as np

        num, den = self.sums(numerator), self.sums(denominator)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    def interval(self, samples: Any) -> tuple[float | None, float | None]:
        """Percentile interval of resampled values (NaN resamples are ignored)."""
        import numpy as np

        samples = np.asarray(samples, dtype=float)
        samples = samples[~np.isnan(samples)]
        if samples.size == 0:
            return None, None
        alpha = (1.0 - self.level) / 2.0
        ordered = np.sort(samples)
        return linear_quantile(ordered, alpha), linear_quantile(ordered, 1.0 - alpha)

    def estimate(self, value: float | None, samples: Any | None, n: int) -> Estimate:
        """An :class:`Estimate` from a point value and its resampled values."""
        if value is None:
            return Estimate(value=None, n=n)
        if not self.active or samples is None:
            return Estimate(value=value, ci_low=value, ci_high=value, n=n)
        low, high = self.interval(samples)
        return Estimate(value=value, ci_low=low, ci_high=high, n=n)


def linear_quantile(ordered: Any, q: float) -> float:
    """``numpy.quantile(values, q)`` (method ``linear``) of sorted, NaN-free ``ordered`` values,
    with the same floating-point operations in the same order, so the same float (tested);
    ``numpy.quantile`` itself imports ``numpy.ma`` and ``numpy.matrixlib``, which cost more
    than the whole bootstrap."""
    n = len(ordered)
    virtual = (n - 1) * q
    if virtual >= n - 1:
        previous = following = -1  # the largest value, as numpy takes it
    elif virtual < 0:
        previous = following = 0
    else:
        previous = math.floor(virtual)
        following = previous + 1
    gamma = virtual - previous
    low, high = float(ordered[previous]), float(ordered[following])
    diff = high - low
    if gamma >= 0.5:
        return high - diff * (1 - gamma)
    return low + diff * gamma
