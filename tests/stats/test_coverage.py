"""Simulation: does the 95% percentile-bootstrap CI of bootstrap_mean cover the true rate?

400 synthetic runs of n = 117 Bernoulli(p) episodes per rate, 2,000 resamples each (the
defaults). Seeded, so the figures are fixed; docs/statistics.md records them.
"""

import numpy as np
import pytest

from todeval.stats import bootstrap_mean

RUNS = 400
N = 117


def _coverage(p: float) -> tuple[float, float]:
    data = np.random.default_rng([117, round(p * 1000)]).random((RUNS, N)) < p
    boot = wilson = 0
    for i, run in enumerate(data.astype(float)):
        est = bootstrap_mean([[x] for x in run], seed=i, label="coverage")
        assert est.ci_low is not None and est.ci_high is not None
        assert est.wilson_low is not None and est.wilson_high is not None
        boot += est.ci_low <= p <= est.ci_high
        wilson += est.wilson_low <= p <= est.wilson_high
    return boot / RUNS, wilson / RUNS


@pytest.mark.parametrize("p", [0.3, 0.7, 0.95])
def test_bootstrap_ci_covers_true_rate(p: float) -> None:
    boot, wilson = _coverage(p)
    print(f"p={p}: percentile bootstrap coverage {boot:.4f}, Wilson coverage {wilson:.4f}")
    if p <= 0.7:
        assert 0.92 <= boot <= 0.98
        assert 0.92 <= wilson <= 0.98
    else:
        # near the boundary the percentile bootstrap under-covers; Wilson should not
        assert wilson >= 0.92
        assert boot <= wilson


def test_exact_coverage_over_all_outcomes() -> None:
    """With one trial per task the interval depends only on the success count k, so the
    coverage is exactly sum_k P(K = k) [p in CI(k)]: no simulation noise."""
    from scipy.stats import binom

    intervals = []
    for k in range(N + 1):
        est = bootstrap_mean([[1.0]] * k + [[0.0]] * (N - k), seed=0, label="coverage")
        intervals.append((est.ci_low, est.ci_high, est.wilson_low, est.wilson_high))
    figures = {}
    for p in (0.3, 0.7, 0.95):
        pmf = binom.pmf(np.arange(N + 1), N, p)
        boot = sum(pmf[k] for k, (lo, hi, _, _) in enumerate(intervals) if lo <= p <= hi)
        wilson = sum(pmf[k] for k, (_, _, lo, hi) in enumerate(intervals) if lo <= p <= hi)
        figures[p] = (boot, wilson)
        print(f"p={p}: exact coverage: percentile bootstrap {boot:.4f}, Wilson {wilson:.4f}")
    for p in (0.3, 0.7):
        assert 0.93 <= figures[p][0] <= 0.96 and 0.93 <= figures[p][1] <= 0.96
    boot95, wilson95 = figures[0.95]
    assert boot95 < 0.93 < wilson95  # the boundary under-coverage the Wilson check exists for
