"""Binary metrics carry the Wilson interval beside the bootstrap CI in summaries."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from todeval.stats import bootstrap_mean, summarize_metric


def test_binary_metric_gets_wilson_on_micro_and_groups_not_macro() -> None:
    values = {f"h{i}": [float(i % 3 != 0)] for i in range(30)}
    values |= {f"t{i}": [float(i % 2)] for i in range(20)}
    groups = {t: "hotel" if t[0] == "h" else "train" for t in values}
    m = summarize_metric(values, groups, seed=0, label="acc")
    successes = sum(v[0] for v in values.values())
    ref = proportion_confint(successes, 50, alpha=0.05, method="wilson")
    assert (m.micro.wilson_low, m.micro.wilson_high) == pytest.approx(ref, abs=1e-12)
    hotel = m.by_group["hotel"]
    ref_hotel = proportion_confint(20, 30, alpha=0.05, method="wilson")
    assert (hotel.wilson_low, hotel.wilson_high) == pytest.approx(ref_hotel, abs=1e-12)
    assert m.macro is not None and m.macro.wilson_low is None
    # deterministic
    assert summarize_metric(values, groups, seed=0, label="acc") == m


def test_non_binary_metric_has_no_wilson_even_in_an_all_binary_group() -> None:
    values = {"a": [1.0], "b": [0.0], "c": [3.0]}
    m = summarize_metric(values, {"a": "x", "b": "x", "c": "y"}, seed=0, label="turns")
    assert m.micro.wilson_low is None and m.by_group["x"].wilson_low is None


def test_several_trials_count_episodes_in_wilson() -> None:
    est = bootstrap_mean([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]], seed=0, label="k")
    ref = proportion_confint(3, 6, alpha=0.05, method="wilson")
    assert est.n == 6 and (est.wilson_low, est.wilson_high) == pytest.approx(ref, abs=1e-12)
    assert bootstrap_mean([[1.0], [0.0]], seed=0, wilson=False).wilson_low is None
