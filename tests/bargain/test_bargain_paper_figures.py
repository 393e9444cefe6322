"""CaSiNo's own figures (issue 26): mean positive-class F1 over the paper's seven strategies and
Joint-A, beside our P/R/F1, with hand-checked values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.bargain.data import PAPER_STRATEGIES
from todeval.benchmarks.bargain.scoring import TurnScore, strategy_paper_metrics
from todeval.cli import main

SEVEN = PAPER_STRATEGIES["casino"]


def turn(gold: list[str], predicted: list[str] | None) -> TurnScore:
    return TurnScore(
        index=0, speaker="a", depth=1, k=10, candidates=[], gold=gold, predicted=predicted,
        correct=0, missed=0, incorrect=0, invalid=0, failed=predicted is None,
    )  # fmt: skip


def test_the_seven_strategies_are_casinos_predicted_ones() -> None:
    assert SEVEN == ("small-talk", "self-need", "other-need", "no-need", "elicit-pref",
                     "uv-part", "vouch-fair")  # fmt: skip


def test_hand_checked_mean_f1_and_joint_accuracy() -> None:
    dialogues = {
        "d1": [
            turn(["small-talk"], ["small-talk"]),  # joint right; small-talk tp
            turn(["self-need", "non-strategic"], ["self-need"]),  # joint right (outside the 7)
        ],
        "d2": [
            turn(["self-need"], ["other-need"]),  # self-need fn, other-need fp; joint wrong
            turn(["non-strategic"], None),  # unreadable: never jointly right, nothing predicted
        ],
    }
    m = strategy_paper_metrics(dialogues, SEVEN, prefix="p", seed=0, resamples=50)
    # per strategy F1 = 2tp / (2tp + fp + fn): small-talk 2/2 = 1; self-need 2/(2+0+1) = 2/3;
    # other-need 0/(0+1+0) = 0; the other four have no instance: 0. Mean over seven.
    assert m["p.mean_f1"].micro.value == pytest.approx((1 + 2 / 3) / 7)
    assert m["p.joint_accuracy"].micro.value == pytest.approx(2 / 4)
    assert m["p.joint_accuracy"].micro.n == 4
    low, high = m["p.joint_accuracy"].micro.ci_low, m["p.joint_accuracy"].micro.ci_high
    assert low is not None and high is not None and low <= 0.5 <= high


@pytest.mark.parametrize(("labeller", "f1", "joint"), [("gold", 1.0, 1.0), ("majority", 0.0, None)])
def test_casino_runs_report_the_paper_figures(
    labeller: str, f1: float, joint: float | None, tmp_path: Path
) -> None:
    out = tmp_path / labeller
    argv = ["run", "bargain", "--track", "casino", "--labeller", labeller, "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    assert metrics["bargain.paper.mean_f1"]["micro"]["value"] == pytest.approx(f1)
    value = metrics["bargain.paper.joint_accuracy"]["micro"]["value"]
    if joint is not None:
        assert value == pytest.approx(joint)
    else:
        # predicting no strategy at all (majority: non-strategic) is jointly right exactly on the
        # utterances that carry none of the seven
        episodes = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
        turns = [t for e in episodes for t in e["details"]["turns"]]
        none = sum(not set(t["gold"]) & set(SEVEN) for t in turns)
        assert value == pytest.approx(none / len(turns))


def test_other_tracks_have_no_paper_figures(tmp_path: Path) -> None:
    out = tmp_path / "cl"
    argv = ["run", "bargain", "--labeller", "keyword", "--limit", "3", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    assert not any(name.startswith("bargain.paper.") for name in metrics)
