"""Console tables show the Wilson score interval, marked ``W``, where the bootstrap interval
collapsed (every task agrees), and say so in their footer."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli import main
from todeval.console.tables import WILSON_NOTE, fmt_estimate, summary_table
from todeval.core.records import Estimate, MetricSummary, Summary
from todeval.stats.proportions import wilson_interval


def _lines(text: str) -> list[str]:
    """The lines with runs of spaces (column padding) squeezed to one."""
    return [" ".join(line.split()) for line in text.splitlines()]


def _rate(successes: int, n: int, ci: tuple[float, float]) -> Estimate:
    low, high = wilson_interval(successes, n)
    return Estimate(
        value=successes / n, ci_low=ci[0], ci_high=ci[1], n=n, wilson_low=low, wilson_high=high
    )


def test_a_collapsed_bootstrap_shows_the_wilson_interval_at_117_of_117() -> None:
    all_booked = _rate(117, 117, (1.0, 1.0))
    assert fmt_estimate(all_booked) == "1.000 [0.968, 1.000]W"
    assert fmt_estimate(_rate(0, 117, (0.0, 0.0))) == "0.000 [0.000, 0.032]W"
    # a bootstrap interval with width, or a collapsed one without a Wilson interval, as before
    assert fmt_estimate(_rate(105, 117, (0.838, 0.949))) == "0.897 [0.838, 0.949]"
    turns = Estimate(value=4.0, ci_low=4.0, ci_high=4.0, n=117)
    assert fmt_estimate(turns) == "4.000 [4.000, 4.000]"
    summary = Summary(
        benchmark="x",
        n_episodes=117,
        outcomes={"success": 117},
        metrics={
            "x.success": MetricSummary(
                micro=all_booked,
                macro=Estimate(value=1.0, ci_low=1.0, ci_high=1.0, n=6),
                by_group={"g": _rate(20, 20, (1.0, 1.0))},
            ),
            "x.turns": MetricSummary(micro=turns),
        },
    )
    table = summary_table(summary, by_group=["x.success"])
    assert "x.success 1.000 [0.968, 1.000]W 117 1.000 [1.000, 1.000]" in _lines(table)
    assert "g 1.000 [0.839, 1.000]W 20" in _lines(table)
    assert table.splitlines()[-1] == WILSON_NOTE
    assert WILSON_NOTE == (
        "W: the bootstrap interval collapsed (every task agrees); Wilson score interval shown"
    )
    plain = summary.model_copy(update={"metrics": {"x.turns": MetricSummary(micro=turns)}})
    assert WILSON_NOTE not in summary_table(plain)


def test_toy_bisect_30_of_30_prints_wilson(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "toy", "--out", str(tmp_path / "toy")]) == 0
    text = capsys.readouterr().out
    assert "toy.success 1.000 [0.886, 1.000]W 30 1.000 [1.000, 1.000]" in _lines(text)
    assert "toy.guesses 6.433 [5.567, 7.300] 30 6.433 [6.200, 6.667]" in _lines(text)
    assert WILSON_NOTE in text
