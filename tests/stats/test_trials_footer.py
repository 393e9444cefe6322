"""The summary footer of a run with several trials per task (issue 44.1): it names the effective
sample size of each 0/1 metric and the range it lies in, and never calls the episode count
something it is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli import main
from todeval.console.tables import trials_note
from todeval.core.records import Estimate


def test_a_run_with_three_trials_names_each_effective_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["run", "booking", "--limit", "12", "--trials", "3", "--no-review", "--out", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    footer = next(line for line in lines if line.startswith("trials: "))
    assert footer.startswith("trials: n counts episodes (36 over 12 tasks); every interval ")
    assert "from 12 (a task's trials always agree: each task counts once) to 36 " in footer
    # the rule system books every goal in every trial: each task counts once
    assert "booking.booking_accuracy 12" in footer
    assert "never over the episodes" not in footer


def test_trials_that_vary_like_separate_tasks_count_every_episode() -> None:
    """Effective n equal to the episode count is a finding, stated as one."""
    independent = Estimate(
        value=0.5,
        ci_low=0.4,
        ci_high=0.6,
        n=351,
        wilson_low=0.45,
        wilson_high=0.55,
        n_tasks=117,
        n_effective=351.0,
    )
    counts = Estimate(value=5.0, ci_low=4.0, ci_high=6.0, n=351, n_tasks=117, n_effective=117.0)
    (line,) = trials_note([("x.success", independent), ("x.turns", counts)])
    assert "(351 over 117 tasks)" in line
    assert "to 351 (they vary as much as separate tasks: each episode counts): x.success 351" in (
        line
    )
    assert "x.turns" not in line  # no Wilson interval: no effective n to name
    assert trials_note([("x.success", Estimate(value=0.5, n=117))]) == []  # one trial
