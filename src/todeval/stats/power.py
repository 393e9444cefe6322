"""Power and sample size for comparing two systems: "how many tasks and trials do I need?"

The unit is the task (as in every interval todeval reports): a task contributes its mean over
``trials`` episodes, whose variance is ``between + within / trials`` -- the spread of the task
rates plus the sampling noise of the trials. Two designs:

* **paired**: both systems on the same tasks (what ``todeval compare`` tests); the test
  statistic is the mean of the per-task differences, whose variance is
  ``var_a + var_b - 2 cov``. Pairing helps as much as the systems agree on which tasks are
  hard;
* **unpaired**: each system on its own sample of tasks (two independent means).

Power is that of the two-sided z-test at level ``alpha`` (normal approximation, both tails
counted), the same as statsmodels' ``NormalIndPower`` (``ratio=0`` for paired, ``ratio=1``
for unpaired, effect size ``difference / sd``): ``tests/stats/test_power.py`` checks it, and
checks the minimum detectable difference against simulated experiments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil, sqrt
from statistics import NormalDist

from pydantic import BaseModel, Field

_Z = NormalDist()


@dataclass(frozen=True)
class TaskVariance:
    """Variance of one system's per-task value: across tasks (``between``) and across the trials
    of one task (``within``, per episode)."""

    between: float
    within: float = 0.0

    def of_mean(self, trials: int) -> float:
        """Variance of a task's mean over ``trials`` episodes."""
        return self.between + self.within / trials


def binary_variance(rate: float, icc: float) -> TaskVariance:
    """A 0/1 metric at ``rate`` whose trials of one task correlate by ``icc`` (1: a task's
    trials always agree, as with a deterministic system; 0: tasks do not differ)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError("a rate lies in [0, 1]")
    if not 0.0 <= icc <= 1.0:
        raise ValueError("the intra-task correlation lies in [0, 1]")
    total = rate * (1.0 - rate)
    return TaskVariance(between=icc * total, within=(1.0 - icc) * total)


def estimate_variance(per_task: Sequence[Sequence[float]]) -> TaskVariance:
    """Between- and within-task variance from a pilot run's values (per task, its episodes)."""
    tasks = [list(v) for v in per_task if len(v) > 0]
    if len(tasks) < 2:
        raise ValueError("a pilot needs at least two tasks")
    with_trials = [v for v in tasks if len(v) > 1]
    within = 0.0
    if with_trials:  # unbiased within-task variance, pooled
        ss = sum(sum((x - sum(v) / len(v)) ** 2 for x in v) for v in with_trials)
        within = ss / sum(len(v) - 1 for v in with_trials)
    means = [sum(v) / len(v) for v in tasks]
    centre = sum(means) / len(means)
    spread = sum((m - centre) ** 2 for m in means) / (len(means) - 1)
    mean_inverse_trials = sum(1.0 / len(v) for v in tasks) / len(tasks)
    return TaskVariance(between=max(0.0, spread - within * mean_inverse_trials), within=within)


def _critical(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha lies in (0, 1)")
    return _Z.inv_cdf(1.0 - alpha / 2.0)


def power(effect: float, n: float, alpha: float = 0.05) -> float:
    """Power of the two-sided z-test for a standardised effect ``effect`` with ``n`` units
    (``effect * sqrt(n)`` is the non-centrality)."""
    z = _critical(alpha)
    shift = abs(effect) * sqrt(n)
    return _Z.cdf(shift - z) + _Z.cdf(-shift - z)


def detectable_effect(n: float, alpha: float = 0.05, target: float = 0.8) -> float:
    """The standardised effect detected with probability ``target`` (bisection on :func:`power`)."""
    if n <= 0:
        raise ValueError("n must be positive")
    if not alpha < target < 1.0:
        raise ValueError("the target power lies between alpha and 1")
    low, high = 0.0, 1.0
    while power(high, n, alpha) < target:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if power(mid, n, alpha) < target:
            low = mid
        else:
            high = mid
    return high


@dataclass(frozen=True)
class Design:
    """Two systems compared on ``tasks`` tasks of ``trials`` episodes each."""

    a: TaskVariance
    b: TaskVariance
    correlation: float = 0.5
    """Correlation of the two systems' task values (paired design only)."""

    def sd(self, trials: int, *, paired: bool) -> float:
        """The standard deviation per unit: of a task's difference (paired), or of one task's
        value pooled over both systems (unpaired: the two-sample z-test's per-arm SD)."""
        va, vb = self.a.of_mean(trials), self.b.of_mean(trials)
        if paired:
            cov = self.correlation * sqrt(self.a.between * self.b.between)
            return sqrt(max(0.0, va + vb - 2.0 * cov))
        return sqrt((va + vb) / 2.0)

    def units(self, tasks: float, *, paired: bool) -> float:
        """The effective n of the z-test: tasks (paired), tasks / 2 per arm (unpaired)."""
        return tasks if paired else tasks / 2.0

    def detectable(
        self, tasks: int, trials: int, *, paired: bool, alpha: float = 0.05, target: float = 0.8
    ) -> float:
        """The smallest difference in means detected with probability ``target``."""
        effect = detectable_effect(self.units(tasks, paired=paired), alpha, target)
        return effect * self.sd(trials, paired=paired)

    def tasks_needed(
        self,
        difference: float,
        trials: int,
        *,
        paired: bool,
        alpha: float = 0.05,
        target: float = 0.8,
        most: int = 10**7,
    ) -> int | None:
        """The fewest tasks (per system when unpaired) detecting ``difference`` with
        probability ``target``; None beyond ``most``."""
        if difference == 0:
            return None
        sd = self.sd(trials, paired=paired)
        if sd == 0:
            return 2
        effect = abs(difference) / sd

        def enough(tasks: int) -> bool:
            return power(effect, self.units(tasks, paired=paired), alpha) >= target

        if not enough(most):
            return None
        low, high = 1, 2
        while not enough(high):
            low, high = high, high * 2
        while high - low > 1:
            mid = (low + high) // 2
            if enough(mid):
                high = mid
            else:
                low = mid
        return max(2, high)


def detectable_paired(
    differences: Sequence[float],
    *,
    binary: bool = False,
    alpha: float = 0.05,
    target: float = 0.8,
) -> float | None:
    """The smallest mean difference a paired comparison of this size detects with probability
    ``target`` at level ``alpha``, from the observed per-task differences ``b_i - a_i``.

    The spread is the differences' standard deviation (ddof 1). For a 0/1 metric
    (``binary``: the task values are 0 or 1) a shift ``D`` needs at least ``D n`` tasks that
    change, so the spread under it is at least ``sqrt(D (1 - D))``: the detectable ``D`` is
    never below ``k^2 / (n + k^2)``, ``k`` the detectable standardised effect times ``sqrt(n)``
    (which keeps two identical runs from claiming to detect anything). None when there is
    nothing to measure: fewer than two tasks, or a metric that is not 0/1 whose differences
    are all equal.
    """
    d = [float(x) for x in differences]
    n = len(d)
    if n < 2:
        return None
    effect = detectable_effect(n, alpha, target)
    mean = sum(d) / n
    sd = sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    if sd <= 1e-12 * max(1.0, abs(mean)):  # equal differences (up to rounding)
        sd = 0.0
    observed = effect * sd
    if binary:
        k2 = effect * effect * n
        return max(observed, k2 / (n + k2))
    return observed if sd > 0 else None


class PowerRow(BaseModel):
    design: str = Field(description="paired (same tasks) or unpaired (separate task samples)")
    tasks: int = Field(description="tasks (per system when unpaired)")
    trials: int
    sd: float = Field(description="standard deviation per task of the tested quantity")
    detectable: float = Field(description="minimum detectable difference at the target power")
    tasks_needed: int | None = Field(
        None, description="tasks needed to detect the requested difference (null: none asked)"
    )


class MeasuredPair(BaseModel):
    """Two pilot runs on the same tasks, read as ``todeval compare`` reads them."""

    tasks: int = Field(description="shared tasks (the pairing unit)")
    mean_a: float
    mean_b: float
    diff: float = Field(description="B - A, mean over shared tasks of the task means")
    sd: float = Field(description="standard deviation of the task differences")
    detectable: float | None = Field(
        description="detectable at this size from these differences (detectable_paired)"
    )


class PowerReport(BaseModel):
    """What ``todeval power -o FILE`` writes."""

    source: str = Field(description="assumed rates, or the pilot run directories")
    metric: str | None = None
    alpha: float
    power: float
    difference: float | None = None
    correlation: float = Field(description="of the two systems' task rates (paired design)")
    between_a: float = Field(description="variance of system A's task rates")
    within_a: float = Field(description="variance of one episode around its task's rate (A)")
    between_b: float
    within_b: float
    rows: list[PowerRow]
    measured: MeasuredPair | None = Field(
        None, description="two pilots: the pair as it is, as compare tests it"
    )
    method: str = (
        "two-sided z-test on task means (normal approximation, both tails), as statsmodels' "
        "NormalIndPower; variance of a task mean = between + within / trials"
    )


def round_up(value: float, digits: int = 3) -> float:
    """``value`` rounded up at ``digits`` decimals (a detectable difference is never flattered)."""
    scale = float(10**digits)
    return ceil(value * scale - 1e-9) / scale


__all__ = [
    "Design",
    "MeasuredPair",
    "PowerReport",
    "PowerRow",
    "TaskVariance",
    "binary_variance",
    "detectable_effect",
    "detectable_paired",
    "estimate_variance",
    "power",
    "round_up",
]
