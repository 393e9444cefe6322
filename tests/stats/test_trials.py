"""Trials (issue 29.5): per-task consistency (always / never / flaky) and the variance split
between tasks and within a task's trials, in the summary, the console and the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from todeval.cli import main
from todeval.report import build_html, load_inputs
from todeval.stats.trials import consistency, variance_split


def test_consistency_labels_tasks_by_how_their_trials_agree() -> None:
    found = consistency("m", {"a": [1, 1, 1], "b": [0, 0, 0], "c": [1, 0, 1], "d": [0, 1, 0]})
    assert (found.always, found.never, found.flaky, found.flaky_tasks) == (1, 1, 2, ["c", "d"])


@pytest.mark.parametrize(("icc", "trials"), [(0.2, 3), (0.7, 5)])
def test_variance_split_recovers_the_simulated_share(icc: float, trials: int) -> None:
    mean = 0.6
    spread = 1 / icc - 1
    rng = np.random.default_rng(int(icc * 10) + trials)
    rates = rng.beta(mean * spread, (1 - mean) * spread, 3000)
    per_task = [list((rng.random(trials) < r).astype(float)) for r in rates]
    split = variance_split("m", per_task, seed=0)
    truth = 1 - icc  # within share of a Beta-Bernoulli with intra-class correlation icc
    assert split.within_share == pytest.approx(truth, abs=0.04)
    assert split.ci_low is not None and split.ci_high is not None
    assert split.ci_low <= truth <= split.ci_high


def test_a_run_with_trials_reports_them_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, three = tmp_path / "one", tmp_path / "three"
    assert main(["run", "toy", "--guesser", "random", "--quiet", "--out", str(one)]) == 0
    argv = ["run", "toy", "--guesser", "random", "--trials", "3", "--out", str(three)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "flaky" in out and "within share [95% CI]" in out
    assert json.loads((one / "summary.json").read_text())["trials"] is None
    trials = json.loads((three / "summary.json").read_text())["trials"]
    c = trials["consistency"]
    assert trials["max_trials"] == 3 and c["metric"] == "toy.success"
    assert c["always"] + c["never"] + c["flaky"] == trials["tasks"] == 30
    assert len(c["flaky_tasks"]) == c["flaky"]
    assert {v["metric"] for v in trials["variance"]} == {"toy.success", "toy.guesses"}
    episodes = [json.loads(x) for x in (three / "episodes.jsonl").read_text().splitlines()]
    by_task: dict[str, set[float]] = {}
    for e in episodes:
        by_task.setdefault(e["task_id"], set()).add(e["metrics"]["toy.success"])
    assert sorted(t for t, v in by_task.items() if v == {0.0, 1.0}) == c["flaky_tasks"]
    html = build_html(load_inputs([three]))
    assert 'id="table-three-trials-consistency"' in html
    assert 'id="table-three-trials-variance"' in html
