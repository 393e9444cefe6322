"""Percentile bootstrap over dialogues with one shared set of resamples.

Every metric of a file is a function of per-dialogue sums (Inform hits, BLEU statistics, token
counts, DST counts), so one matrix ``W`` of resample weights (how often each dialogue was drawn
in each resample) turns all of them into resampled sums by matrix products. Corpus-level
metrics (BLEU, Combined, slot precision/recall/F1, per-domain rates) are then recomputed per
resample from those sums. This is the method of :mod:`todeval.stats` (percentile bootstrap
over units, 2000 resamples, seeded) with the resamples shared across metrics, so e.g. the
Combined interval is consistent with the Inform, Success and BLEU ones.
"""

from __future__ import annotations

import zlib
from typing import Any

from todeval.core.records import Estimate


class DialogueBootstrap:
    """Resample weights for ``n`` dialogues (``resamples`` x ``n``), seeded."""

    def __init__(self, n: int, *, seed: int, resamples: int, level: float, label: str) -> None:
        import numpy as np

        self.n = n
        self.level = level
        self.resamples = resamples
        rng = np.random.default_rng([seed, zlib.crc32(label.encode())])
        if n >= 2:
            idx = rng.integers(0, n, size=(resamples, n))
            idx += np.arange(resamples)[:, None] * n
            counts = np.bincount(idx.ravel(), minlength=resamples * n)
            self.weights: Any = counts.reshape(resamples, n).astype(float)
        else:
            self.weights = None

    def sums(self, values: Any) -> Any:
        """Resampled sums of per-dialogue values: ``(n,)`` -> ``(R,)``, ``(n, k)`` -> ``(R, k)``."""
        import numpy as np

        return self.weights @ np.asarray(values, dtype=float)

    def interval(self, samples: Any) -> tuple[float | None, float | None]:
        """Percentile interval of resampled values (NaN resamples are ignored)."""
        import numpy as np

        samples = np.asarray(samples, dtype=float)
        samples = samples[~np.isnan(samples)]
        if samples.size == 0:
            return None, None
        alpha = (1.0 - self.level) / 2.0
        low, high = np.quantile(samples, [alpha, 1.0 - alpha])
        return float(low), float(high)

    def estimate(self, value: float | None, samples: Any | None, n: int) -> Estimate:
        """An :class:`Estimate` from a point value and its resampled values."""
        if value is None:
            return Estimate(value=None, n=n)
        if self.weights is None or samples is None:
            return Estimate(value=value, ci_low=value, ci_high=value, n=n)
        low, high = self.interval(samples)
        return Estimate(value=value, ci_low=low, ci_high=high, n=n)

    def ratio(self, numerator: Any, denominator: Any) -> Any:
        """Resampled ``sum(numerator) / sum(denominator)`` (NaN where the denominator is 0)."""
        import numpy as np

        num, den = self.sums(numerator), self.sums(denominator)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
