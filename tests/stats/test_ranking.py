"""rank and kendall_tau against SciPy."""

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata

from todeval.stats import kendall_tau, rank


def test_rank_matches_rankdata_with_ties() -> None:
    values = [0.5, 0.9, 0.5, 0.1, 0.9, 0.9, 0.3]
    assert rank(values) == list(rankdata(values))
    assert rank(values, descending=True) == list(rankdata([-v for v in values]))
    assert rank([0.8, 0.6, 0.7], descending=True) == [1.0, 3.0, 2.0]
    assert rank([]) == []


@pytest.mark.parametrize("seed", range(8))
def test_kendall_tau_b_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    # few distinct values, so ties are common in both sequences
    x = rng.integers(0, 4, size=n).astype(float)
    y = (x + rng.integers(-1, 2, size=n)).astype(float)
    ours = kendall_tau(list(x), list(y))
    ref = kendalltau(x, y, variant="b").statistic
    if np.isnan(ref):
        assert ours is None
    else:
        assert ours == pytest.approx(ref, abs=1e-12)


def test_kendall_tau_known_values() -> None:
    assert kendall_tau([1, 2, 3, 4], [1, 2, 3, 4]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([0.8, 0.6, 0.7], [0.9, 0.5, 0.4]) == pytest.approx(1 / 3)
    assert kendall_tau([1, 1, 1], [1, 2, 3]) is None
    assert kendall_tau([1], [1]) is None
    with pytest.raises(ValueError):
        kendall_tau([1, 2], [1])
