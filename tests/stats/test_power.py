"""Power and sample size (issue 29.2): the formulas equal statsmodels' power functions, and the
minimum detectable difference is detected 80% of the time by simulated experiments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower

from todeval.cli import main
from todeval.stats.power import (
    Design,
    TaskVariance,
    binary_variance,
    detectable_effect,
    detectable_paired,
    estimate_variance,
    power,
)

Z = 1.959963984540054  # two-sided 5%


@pytest.mark.parametrize("n", [8, 30, 117, 1000])
@pytest.mark.parametrize("alpha", [0.01, 0.05])
def test_power_and_detectable_effect_equal_statsmodels(n: int, alpha: float) -> None:
    sm = NormalIndPower()
    for effect in (0.05, 0.2, 0.5):
        assert power(effect, n, alpha) == pytest.approx(
            sm.power(effect, n, alpha, ratio=0), abs=1e-9
        )
        unpaired = sm.power(effect, n, alpha, ratio=1)
        assert power(effect, n / 2, alpha) == pytest.approx(unpaired, abs=1e-9)
    for target in (0.8, 0.9):
        ours = detectable_effect(n, alpha, target)
        theirs = sm.solve_power(effect_size=None, nobs1=n, alpha=alpha, power=target, ratio=0)
        assert ours == pytest.approx(theirs, abs=1e-5)
        ours = detectable_effect(n / 2, alpha, target)
        theirs = sm.solve_power(effect_size=None, nobs1=n, alpha=alpha, power=target, ratio=1)
        assert ours == pytest.approx(theirs, abs=1e-5)


def _simulated_power(design: Design, tasks: int, trials: int, diff: float, paired: bool) -> float:
    """Share of 20,000 simulated experiments whose two-sided test (estimated SD) rejects."""
    rng = np.random.default_rng(2902 + trials + 10 * paired)
    runs = 20_000
    ua = rng.normal(0, np.sqrt(design.a.between), (runs, tasks))
    own = rng.normal(0, np.sqrt(design.b.between), (runs, tasks))
    rho = design.correlation
    ub = rho * ua + np.sqrt(1 - rho**2) * own if paired else own
    a = ua + rng.normal(0, np.sqrt(design.a.within / trials), (runs, tasks))
    b = diff + ub + rng.normal(0, np.sqrt(design.b.within / trials), (runs, tasks))
    if paired:
        d = b - a
        z = d.mean(1) / (d.std(1, ddof=1) / np.sqrt(tasks))
    else:
        se = np.sqrt(a.var(1, ddof=1) / tasks + b.var(1, ddof=1) / tasks)
        z = (b.mean(1) - a.mean(1)) / se
    return float((np.abs(z) > Z).mean())


@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("trials", [1, 3])
def test_the_detectable_difference_is_detected_80_percent_of_the_time(
    paired: bool, trials: int
) -> None:
    design = Design(binary_variance(0.6, 0.3), binary_variance(0.7, 0.3), correlation=0.5)
    diff = design.detectable(117, trials, paired=paired)
    found = _simulated_power(design, 117, trials, diff, paired)
    print(f"paired={paired} trials={trials}: difference {diff:.4f}, simulated power {found:.4f}")
    assert abs(found - 0.8) <= 0.01


def test_tasks_needed_is_the_smallest_that_reaches_the_power() -> None:
    design = Design(binary_variance(0.6, 1.0), binary_variance(0.6, 1.0))
    for paired in (True, False):
        n = design.tasks_needed(0.1, 1, paired=paired)
        assert n is not None
        assert (
            design.detectable(n, 1, paired=paired)
            <= 0.1
            < design.detectable(n - 1, 1, paired=paired)
        )


def test_variance_from_a_pilot_separates_tasks_from_trials() -> None:
    rng = np.random.default_rng(5)
    rates = rng.beta(2, 2, 4000)
    per_task = [list((rng.random(5) < r).astype(float)) for r in rates]
    found = estimate_variance(per_task)
    between = float(np.var(rates))  # Beta(2,2): 0.05
    within = float(np.mean(rates * (1 - rates)))  # 0.2
    assert found.between == pytest.approx(between, abs=0.005)
    assert found.within == pytest.approx(within, abs=0.005)
    assert TaskVariance(0.05, 0.2).of_mean(4) == pytest.approx(0.1)


def test_the_command_from_rates_and_from_a_pilot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "power.json"
    argv = ["power", "--rate", "0.6", "--tasks", "117", "--difference", "0.1", "-o", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "detectable difference (80% power, alpha 0.05)" in text
    report = json.loads(out.read_text())
    paired, unpaired = report["rows"]
    sm = NormalIndPower()
    sd = np.sqrt(0.24)
    expected = sm.solve_power(effect_size=None, nobs1=117, alpha=0.05, power=0.8, ratio=1) * sd
    assert unpaired["detectable"] == pytest.approx(expected, abs=0.001)
    assert paired["detectable"] < unpaired["detectable"]  # pairing on correlated tasks helps
    assert paired["tasks_needed"] < unpaired["tasks_needed"]
    pilots = []
    for guesser in ("random", "bisect"):
        run = tmp_path / guesser
        assert main(["run", "toy", "--guesser", guesser, "--quiet", "--out", str(run)]) == 0
        pilots.append(str(run))
    assert main(["power", "--from", *pilots, "--metric", "toy.guesses", "--trials", "1", "3"]) == 0
    text = capsys.readouterr().out
    assert text.count("paired") >= 2 and "pilot:" in text
    assert main(["power", "--from", pilots[0], "--metric", "nope"]) == 2
    assert "valid choices" in capsys.readouterr().err
    assert main(["power", "--rate", "0.6"]) == 2  # no --tasks


def test_detectable_paired_from_task_differences() -> None:
    """compare's 'detectable at this size': the z-test's detectable effect times the sd of the
    observed differences; for 0/1 pairs never below the shift whose own spread it needs."""
    rng = np.random.default_rng(7)
    d = list(rng.normal(0.1, 0.3, size=117))
    sd = float(np.std(d, ddof=1))
    effect = NormalIndPower().solve_power(
        effect_size=None, nobs1=117, alpha=0.005, power=0.8, ratio=0
    )
    assert detectable_paired(d, alpha=0.005) == pytest.approx(effect * sd, rel=1e-5)
    assert detectable_paired([0.2] * 117) is None  # nothing to measure
    assert detectable_paired([1.0]) is None
    # identical 0/1 runs: the floor; simulated one-way shifts of that size (each task changes
    # with probability D) are found at least 80% of the time by the z-test on the differences
    for n, alpha in ((117, 0.05), (117, 0.005), (40, 0.05)):
        shift = detectable_paired([0.0] * n, binary=True, alpha=alpha)
        assert shift is not None
        draws = (np.random.default_rng(1).random((4000, n)) < shift).astype(float)
        spread = draws.std(axis=1, ddof=1)
        z = np.divide(draws.mean(axis=1) * np.sqrt(n), spread, out=np.zeros(4000), where=spread > 0)
        found = float(np.mean(np.abs(z) > _critical(alpha)))
        print(f"n {n}, alpha {alpha}: floor {shift:.4f}, simulated power {found:.3f}")
        assert found >= 0.8


def _critical(alpha: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(1 - alpha / 2)
