"""Closed-form statistics for 0/1 outcomes: the Wilson score interval and McNemar's exact test.

The Wilson interval assumes independent trials: with several trials per task it is taken over
the sample's effective size (:func:`effective_n`, between the number of tasks and of
episodes), never over the correlated episodes. McNemar assumes independent pairs (one per
task). They are checks beside the bootstrap, which resamples tasks, not replacements.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import comb, sqrt
from statistics import NormalDist

from pydantic import BaseModel, Field


def is_binary(values: Iterable[float]) -> bool:
    """True if every value is exactly 0 or 1 (and there is at least one)."""
    seen = False
    for v in values:
        if v != 0.0 and v != 1.0:
            return False
        seen = True
    return seen


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    The interval inverts the score test: the set of rates ``p`` with
    ``|phat - p| <= z * sqrt(p (1 - p) / n)``. Unlike the Wald or percentile-bootstrap
    intervals it stays inside [0, 1] and keeps its width when ``phat`` is 0 or 1.
    """
    if n <= 0:
        raise ValueError("n must be positive")
    if not 0 <= successes <= n:
        raise ValueError("successes must lie in [0, n]")
    return wilson_bounds(successes / n, n, level)


def wilson_bounds(phat: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a rate ``phat`` observed on ``n`` independent trials; ``n``
    may be an effective sample size (:func:`effective_n`), not a whole number."""
    if n <= 0:
        raise ValueError("n must be positive")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    z2 = z * z
    centre = (phat + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * sqrt(phat * (1 - phat) / n + z2 / (4 * n * n))
    low = 0.0 if phat <= 0 else max(0.0, centre - half)
    high = 1.0 if phat >= 1 else min(1.0, centre + half)
    return low, high


def effective_n(sums: Sequence[float], counts: Sequence[float]) -> float:
    """How many independent episodes a clustered sample of 0/1 outcomes is worth.

    ``sums[i]`` successes in ``counts[i]`` episodes of task ``i`` (its trials). Trials of one
    task are correlated, so ``n`` episodes carry less information than ``n`` independent ones:
    the effective size is ``phat (1 - phat) / Var(phat)`` with the cluster-robust (sandwich)
    variance over tasks, kept between the number of tasks and the number of episodes. When
    the variance is 0 (every task at the same rate) it is the number of tasks if the rate is 0
    or 1 (nothing tells the trials apart from copies), else the number of episodes.
    """
    k = len(sums)
    n = float(sum(counts))
    if k == 0 or n <= 0:
        raise ValueError("no episodes")
    phat = float(sum(sums)) / n
    if k < 2:
        return float(k)
    resid = sum((s - phat * c) ** 2 for s, c in zip(sums, counts, strict=True))
    variance = resid / (n * n) * k / (k - 1)
    if variance <= 0:
        return n if 0 < phat < 1 else float(k)
    return min(n, max(float(k), phat * (1 - phat) / variance))


class McNemar(BaseModel):
    """McNemar's exact test on paired 0/1 outcomes (baseline A, run B)."""

    b: int = Field(description="pairs where A scored 1 and B 0")
    c: int = Field(description="pairs where A scored 0 and B 1")
    p_value: float = Field(description="two-sided exact p: binomial test of b vs c at 1/2")


def mcnemar_exact(b: int, c: int) -> McNemar:
    """Two-sided exact McNemar test: under no difference, ``b ~ Binomial(b + c, 1/2)``.

    The p-value is ``min(1, 2 * P(X <= min(b, c)))``, computed with exact integers (no
    overflow or rounding in the tail sum). With no discordant pairs, p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError("counts must be non-negative")
    n = b + c
    if n == 0:
        return McNemar(b=b, c=c, p_value=1.0)
    k = min(b, c)
    tail = sum(comb(n, i) for i in range(k + 1))
    p = min(1.0, 2 * tail / 2**n)
    return McNemar(b=b, c=c, p_value=p)
