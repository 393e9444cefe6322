"""Wilson interval and McNemar's exact test against statsmodels and SciPy on fixed data."""

import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from todeval.stats import is_binary, mcnemar_exact, wilson_interval

WILSON_CASES = [(0, 10), (10, 10), (1, 10), (7, 20), (83, 117), (111, 117), (117, 117), (58, 117)]


@pytest.mark.parametrize(("successes", "n"), WILSON_CASES)
def test_wilson_matches_statsmodels(successes: int, n: int) -> None:
    low, high = wilson_interval(successes, n)
    ref_low, ref_high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_wilson_other_level_and_bad_input() -> None:
    low, high = wilson_interval(30, 50, level=0.9)
    ref = proportion_confint(30, 50, alpha=0.1, method="wilson")
    assert (low, high) == pytest.approx(ref, abs=1e-12)
    with pytest.raises(ValueError):
        wilson_interval(3, 0)
    with pytest.raises(ValueError):
        wilson_interval(4, 3)


# (a, b, c, d): a = both succeed, b = A only, c = B only, d = both fail
TABLES = [
    (40, 12, 0, 65),
    (40, 3, 9, 65),
    (10, 5, 5, 10),
    (0, 0, 0, 117),
    (1, 30, 14, 2),
    (0, 1, 0, 0),
]


@pytest.mark.parametrize("table", TABLES)
def test_mcnemar_matches_statsmodels_and_binomtest(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    result = mcnemar_exact(b, c)
    assert (result.b, result.c) == (b, c)
    ref = mcnemar([[a, b], [c, d]], exact=True).pvalue
    assert result.p_value == pytest.approx(ref, rel=1e-12, abs=1e-15)
    if b + c:
        assert result.p_value == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    else:
        assert result.p_value == 1.0


def test_mcnemar_large_counts_stay_exact() -> None:
    result = mcnemar_exact(700, 900)
    ref = binomtest(700, 1600, 0.5).pvalue
    assert result.p_value == pytest.approx(ref, rel=1e-9)
    assert 0.0 < result.p_value < 1e-5
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_is_binary() -> None:
    assert is_binary([0.0, 1.0, 1.0])
    assert is_binary([0.0])
    assert not is_binary([])
    assert not is_binary([0.0, 0.5])
    assert not is_binary([2.0])
