"""Panels (issue 29.6): paired bootstrap intervals for the spread, for every two varied members'
difference and for Kendall's tau, on constructed panels and on a real (toy) panel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from todeval.cli import main
from todeval.core.records import Estimate
from todeval.panels.model import SubjectSpread
from todeval.panels.summary import spread_of, tau_intervals, with_intervals


def _values(
    rates: dict[tuple[str, str], float], tasks: int = 150
) -> dict[tuple[str, str], dict[str, float]]:
    rng = np.random.default_rng(6)
    difficulty = rng.random(tasks)
    return {
        key: {f"t{i}": float(difficulty[i] < rate) for i in range(tasks)}
        for key, rate in rates.items()
    }


def _spread(
    values: dict[tuple[str, str], dict[str, float]], subject: str, varied: list[str]
) -> SubjectSpread:
    per_member = {
        v: Estimate(value=float(np.mean(list(values[(subject, v)].values()))), n=150)
        for v in varied
    }
    return with_intervals(spread_of(per_member), subject, varied, values, seed=0, resamples=2000)


def test_a_simulator_that_moves_the_score_is_separated_and_one_that_does_not_is_not() -> None:
    values = _values({("sys", "kind"): 0.8, ("sys", "harsh"): 0.4, ("sys", "twin"): 0.8})
    spread = _spread(values, "sys", ["kind", "harsh", "twin"])
    assert spread.n_tasks == 150 and spread.spread_ci is not None and spread.std_ci is not None
    assert spread.spread_max_min is not None
    assert spread.spread_ci[0] <= spread.spread_max_min <= spread.spread_ci[1]
    assert spread.spread_ci[0] > 0.2  # kind vs harsh: 0.4 apart
    moved = spread.differences["kind|harsh"]
    assert moved.separated and moved.ci_low <= -0.3 and moved.ci_high < -0.2
    same = spread.differences["kind|twin"]
    assert not same.separated and same.diff == 0.0


def test_tau_interval_is_narrow_when_the_order_is_clear_and_wide_when_it_is_not() -> None:
    clear = _values(
        {("a", "u1"): 0.9, ("b", "u1"): 0.5, ("c", "u1"): 0.1,
         ("a", "u2"): 0.85, ("b", "u2"): 0.45, ("c", "u2"): 0.15}
    )  # fmt: skip
    taus, n = tau_intervals(["a", "b", "c"], ["u1", "u2"], clear, seed=0, resamples=500)
    assert n == 150 and taus["u1|u2"] == (1.0, 1.0)
    rng = np.random.default_rng(9)
    noisy = {
        (s, v): {f"t{i}": float(rng.random() < 0.5) for i in range(40)}
        for s in "abc"
        for v in ("u1", "u2")
    }
    taus, _ = tau_intervals(["a", "b", "c"], ["u1", "u2"], noisy, seed=0, resamples=500)
    ci = taus["u1|u2"]
    assert ci is not None and ci[0] <= -0.3 and ci[1] >= 0.3


def test_a_panel_run_writes_and_prints_the_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "panel"
    argv = ["run", "toy", "--guessers", "bisect,random", "--hosts", "rule,vague", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "max - min (paper) [95% CI]" in text and "Kendall tau-b [95% CI]" in text
    assert "difference between two hosts" in text
    panel = json.loads((out / "panel.json").read_text())
    random = panel["spread"]["random"]
    low, high = random["spread_ci"]
    assert low <= random["spread_max_min"] <= high and random["n_tasks"] == 30
    assert set(random["differences"]) == {"rule|vague"}
    assert panel["rank_stability"]["kendall_tau_ci"]["rule|vague"] == [-1.0, -1.0]
