"""Progress without a terminal: a line every few seconds, not one per episode (issue 44.4)."""

from __future__ import annotations

import io

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Timing
from todeval.runner.progress import ProgressReporter


def _record(i: int) -> EpisodeRecord:
    return EpisodeRecord(
        benchmark="toy",
        episode_id=f"t{i}#0",
        task_id=f"t{i}",
        trial=0,
        seed=0,
        outcome=Outcome.SUCCESS,
        termination="completed",
        timing=Timing(
            started_at="2026-01-01T00:00:00Z", ended_at="2026-01-01T00:00:01Z", duration_s=1.0
        ),
    )


def test_a_log_gets_a_line_every_interval_and_the_last() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = ProgressReporter(100, stream=out, live=False, interval=5.0, clock=lambda: now[0])
    for i in range(100):  # an episode every 0.5 s: 50 s in all
        now[0] += 0.5
        progress.started()
        progress.finished(_record(i))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[1/100]") and lines[-1].startswith("[100/100]")
    assert 10 <= len(lines) <= 12  # the first, one per 5 s, the last: not 100
    assert "t0#0 success" in lines[0]


def test_a_slow_run_still_says_every_episode() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = ProgressReporter(3, stream=out, live=False, interval=5.0, clock=lambda: now[0])
    for i in range(3):
        now[0] += 60.0
        progress.finished(_record(i))
    assert len(out.getvalue().splitlines()) == 3
