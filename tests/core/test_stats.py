import numpy as np

from todeval.stats.bootstrap import bootstrap_mean, summarize_metric


def test_macro_differs_from_micro_on_unbalanced_groups() -> None:
    # group a: 8 tasks all 1.0; group b: 2 tasks all 0.0
    values = {f"a{i}": [1.0] for i in range(8)} | {f"b{i}": [0.0] for i in range(2)}
    groups = {t: t[0] for t in values}
    m = summarize_metric(values, groups, seed=0, label="x")
    assert m.micro.value == 0.8 and m.micro.n == 10
    assert m.macro is not None and m.macro.value == 0.5 and m.macro.n == 2
    assert m.by_group["a"].value == 1.0 and m.by_group["b"].value == 0.0
    # within-group resampling: each group's mean is constant, so the macro CI is degenerate
    assert m.macro.ci_low == m.macro.ci_high == 0.5
    assert m.micro.ci_low is not None and m.micro.ci_high is not None
    assert m.micro.ci_low < 0.8 < m.micro.ci_high


def test_macro_over_non_empty_groups_only() -> None:
    values = {"a": [1.0], "b": [0.0], "c": []}
    m = summarize_metric(values, {"a": "g1", "b": "g2", "c": "g3"}, seed=0, label="x")
    assert m.macro is not None and m.macro.n == 2


def test_bootstrap_is_seeded_and_resamples_tasks_not_trials() -> None:
    per_task = [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    a = bootstrap_mean(per_task, seed=3, label="m")
    b = bootstrap_mean(per_task, seed=3, label="m")
    assert a == b
    assert a.value == 0.5 and a.n == 12
    c = bootstrap_mean(per_task, seed=4, label="m")
    assert (c.ci_low, c.ci_high) != (a.ci_low, a.ci_high) or c.value == a.value


def test_percentile_interval_matches_numpy_reference() -> None:
    rng = np.random.default_rng(0)
    data = (rng.random(117) < 0.7).astype(float)
    est = bootstrap_mean([[x] for x in data], seed=0, label="acc", resamples=2000)
    se = data.std(ddof=1) / np.sqrt(len(data))
    assert est.ci_low is not None and est.ci_high is not None
    width = est.ci_high - est.ci_low
    assert abs(width - 2 * 1.96 * se) < 0.03


def test_pass_hat_k() -> None:
    from todeval.runner.summary import pass_hat_k

    assert pass_hat_k(3, 3, 3) == 1.0
    assert pass_hat_k(2, 4, 2) == 1 / 6
    assert pass_hat_k(1, 4, 2) == 0.0
    assert pass_hat_k(4, 4, 1) == 1.0
