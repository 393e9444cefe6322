"""The paired bootstrap against SciPy's bootstrap and a paired t-test on fixed data."""

import numpy as np
import pytest
from scipy.stats import bootstrap, ttest_rel

from todeval.stats import bootstrap_p_value, paired_bootstrap


def _paired_binary(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.7).astype(float)
    flip = rng.random(n) < 0.2
    b = np.where(flip, 1.0 - a, a)
    b[rng.random(n) < 0.1] = 1.0
    return a, b


def test_ci_matches_scipy_paired_percentile_bootstrap() -> None:
    a, b = _paired_binary(117, 7)
    ours = paired_bootstrap(list(a), list(b), seed=0, label="m", resamples=20000)
    ref = bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=20000,
        rng=np.random.default_rng(1),
    ).confidence_interval
    step = 1.0 / len(a)  # the bootstrap distribution moves in steps of 1/n
    assert ours.diff == pytest.approx(float(np.mean(b - a)))
    assert abs(ours.ci_low - ref.low) <= 1.5 * step
    assert abs(ours.ci_high - ref.high) <= 1.5 * step


def test_pairing_narrows_the_interval() -> None:
    rng = np.random.default_rng(3)
    task_difficulty = rng.normal(0.0, 2.0, 117)
    a = task_difficulty + rng.normal(0.0, 0.3, 117)
    b = task_difficulty + 0.1 + rng.normal(0.0, 0.3, 117)
    paired = paired_bootstrap(list(a), list(b), seed=0, label="x")
    # an unpaired interval would be about sqrt(2 * 4.09 / 117) * 1.96 * 2 = 1.04 wide
    assert paired.ci_high - paired.ci_low < 0.25
    assert paired.ci_low < paired.diff < paired.ci_high


@pytest.mark.parametrize(("seed", "shift"), [(0, 0.15), (1, 0.3), (2, 0.0), (3, -0.2), (4, 0.5)])
def test_p_value_close_to_paired_t_test(seed: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.0, 117)
    b = a + shift + rng.normal(0.0, 1.0, 117)
    ours = paired_bootstrap(list(a), list(b), seed=0, label="t", resamples=20000)
    ref = ttest_rel(b, a).pvalue
    assert abs(ours.p_value - ref) < 0.03
    # p < 0.05 exactly when the 95% interval excludes 0 (away from the edge)
    if abs(ours.p_value - 0.05) > 0.005:
        assert (ours.p_value < 0.05) == (ours.ci_low > 0 or ours.ci_high < 0)


def test_identical_runs_give_zero_difference_and_p_one() -> None:
    a = [1.0, 0.0, 1.0, 1.0, 0.5]
    est = paired_bootstrap(a, list(a), seed=0, label="same")
    assert (est.diff, est.ci_low, est.ci_high, est.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_p_value_floor_and_ties() -> None:
    assert bootstrap_p_value(np.full(1999, 0.5)) == pytest.approx(2 / 2000)
    assert bootstrap_p_value(np.zeros(100)) == 1.0
    # half below, half above: p = 1
    assert bootstrap_p_value(np.array([-1.0, 1.0] * 50)) == 1.0
    # tiny rounding noise around 0 counts as ties
    assert bootstrap_p_value(np.array([1e-17, -1e-17] * 10)) == 1.0


def test_deterministic_and_seeded() -> None:
    a, b = _paired_binary(60, 11)
    one = paired_bootstrap(list(a), list(b), seed=5, label="acc")
    assert one == paired_bootstrap(list(a), list(b), seed=5, label="acc")
    other = paired_bootstrap(list(a), list(b), seed=6, label="acc")
    assert other.diff == one.diff
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 0.0], seed=0)
    with pytest.raises(ValueError):
        paired_bootstrap([], [], seed=0)
    single = paired_bootstrap([0.0], [1.0], seed=0)
    assert (single.diff, single.ci_low, single.ci_high, single.p_value) == (1.0, 1.0, 1.0, 1.0)
