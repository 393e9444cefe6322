"""Paired bootstrap of a difference in means over shared tasks.

Each task contributes one pair ``(a_i, b_i)`` (with several trials, the task's mean in each
run). A resample draws tasks with replacement and uses the same draw for both runs, so the
statistic is the mean of the per-task differences ``d_i = b_i - a_i`` over the drawn tasks.

* CI: percentile interval of the resampled mean differences.
* p-value (two-sided, by inverting the percentile interval): twice the smaller share of
  resampled differences on either side of 0, ties at 0 counted half to each side, with the
  usual +1 correction, ``p = min(1, 2 (min(lo, hi) + 1) / (R + 1))``. So p < 1 - level
  exactly when the percentile interval at that level excludes 0 (up to the quantile
  interpolation), and the smallest p that can be reported is ``2 / (R + 1)``
  (:func:`p_floor`): a p there is a bound, "at most", not a value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, interval, seeded_rng

_TIE = 1e-12


class PairedDifference(BaseModel):
    """Mean of run B minus mean of run A over paired tasks, with a bootstrap CI and p-value."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float


def p_floor(resamples: int) -> float:
    """The smallest p :func:`bootstrap_p_value` gives with ``resamples`` replicates,
    ``2 / (R + 1)``: a p at this floor says only that the true p is at most this."""
    return min(1.0, 2.0 / (resamples + 1.0))


def at_floor(p_value: float, resamples: int) -> bool:
    """Whether ``p_value`` is the bootstrap's floor (no replicate on the far side of 0)."""
    return p_value <= p_floor(resamples) * (1.0 + 1e-9)


def bootstrap_p_value(samples: np.ndarray, null: float = 0.0) -> float:
    """Two-sided p-value from bootstrap replicates by inverting the percentile interval."""
    resamples = len(samples)
    # replicates within rounding error of the null (sums of task means) count as ties
    offset = samples - null
    below = float(np.count_nonzero(offset < -_TIE))
    above = float(np.count_nonzero(offset > _TIE))
    ties = resamples - below - above
    smaller = min(below, above) + ties / 2.0
    return min(1.0, 2.0 * (smaller + 1.0) / (resamples + 1.0))


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    label: str = "",
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> PairedDifference:
    """Paired percentile bootstrap of ``mean(b) - mean(a)``; ``a[i]`` and ``b[i]`` pair up.

    Deterministic for a given ``(seed, label)``. With a single pair the CI is the point and
    p is 1 (there is nothing to resample).
    """
    if len(a) != len(b):
        raise ValueError("a and b must pair up (same length)")
    if not a:
        raise ValueError("no pairs")
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    d = xb - xa
    diff = float(d.mean())
    mean_a, mean_b = float(xa.mean()), float(xb.mean())
    if len(d) < 2:
        return PairedDifference(
            n=1, mean_a=mean_a, mean_b=mean_b, diff=diff, ci_low=diff, ci_high=diff, p_value=1.0
        )
    rng = seeded_rng(seed, "paired:" + label)
    idx = rng.integers(0, len(d), size=(resamples, len(d)))
    samples = np.asarray(d[idx].mean(axis=1), dtype=float)
    low, high = interval(samples, level)
    return PairedDifference(
        n=len(d),
        mean_a=mean_a,
        mean_b=mean_b,
        diff=diff,
        ci_low=low,
        ci_high=high,
        p_value=bootstrap_p_value(samples),
    )
