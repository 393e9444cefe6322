"""Rank intervals and significance tiers (issue 29.4), on constructed runs whose order is and
is not separable, and in every leaderboard rendering."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from todeval.cli import main
from todeval.report import boards, build_html, export_table, load_inputs
from todeval.stats.ranking import rank_intervals, significance_tiers


def _runs(rates: list[float], tasks: int = 200, seed: int = 0) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [list((rng.random(tasks) < p).astype(float)) for p in rates]


def test_a_separable_order_gets_point_ranks_and_one_tier_each() -> None:
    runs = _runs([0.9, 0.6, 0.3])
    assert rank_intervals(runs) == [(1, 1), (2, 2), (3, 3)]
    assert significance_tiers(runs) == [1, 2, 3]


def test_runs_that_cannot_be_told_apart_share_ranks_and_a_tier() -> None:
    rng = np.random.default_rng(1)
    base = (rng.random(200) < 0.6).astype(float)
    flips = [np.where(rng.random(200) < 0.04, 1 - base, base) for _ in range(2)]
    runs = [list(base), *(list(f) for f in flips)]
    intervals = rank_intervals(runs)
    assert all(low == 1 and high >= 2 for low, high in intervals)
    assert significance_tiers(runs) == [1, 1, 1]


def test_two_close_leaders_then_a_clear_third() -> None:
    rng = np.random.default_rng(2)
    top = (rng.random(300) < 0.8).astype(float)
    close = np.where(rng.random(300) < 0.03, 1 - top, top)
    runs = [list(top), list(close), list((rng.random(300) < 0.3).astype(float))]
    tiers = significance_tiers(runs)
    assert tiers[0] == tiers[1] == 1 and tiers[2] == 2
    assert rank_intervals(runs)[2] == (3, 3)


def test_the_intervals_are_deterministic_and_follow_the_resampled_ranks() -> None:
    runs = _runs([0.55, 0.5, 0.45], tasks=60, seed=3)
    assert rank_intervals(runs, seed=4) == rank_intervals(runs, seed=4)
    for low, high in rank_intervals(runs):
        assert 1 <= low <= high <= 3


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("ranked")
    out = []
    for name, argv in (
        ("bisect", ["--guesser", "bisect"]),
        ("random-a", ["--guesser", "random", "--seed", "0"]),
        ("random-b", ["--guesser", "random", "--seed", "0", "--protocol", "standard"]),
    ):
        assert main(["run", "toy", *argv, "--quiet", "--out", str(base / name)]) == 0
        out.append(base / name)
    return out


def test_every_leaderboard_rendering_shows_ranks_and_tiers(toy_runs: list[Path]) -> None:
    inputs = load_inputs(toy_runs)
    (board,) = boards(inputs)
    assert board.rank_tasks == 30
    assert board.tier(board.rows[0]) == "1" and board.rows[0].key == "bisect"
    assert board.tiers["random-a"] == board.tiers["random-b"] == 2  # identical runs: one tier
    md = export_table([board], "md")
    assert "| rank [95%] | tier |" in md and "Rank [95%]:" in md
    latex = export_table([board], "latex")
    assert "rank [95\\%] & tier" in latex
    rows = list(csv.DictReader(io.StringIO(export_table([board], "csv"))))
    assert {r["run"]: r["tier"] for r in rows} == {"bisect": "1", "random-a": "2", "random-b": "2"}
    assert rows[0]["rank_low"] == rows[0]["rank_high"] == "1"
    html = build_html(inputs)
    assert 'class="rk">[1] T1<' in html
