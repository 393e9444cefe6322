"""Every metric a built-in benchmark writes has its better direction declared by the
benchmark's profile (issue 44.1: compare shows it beside each metric and reads its verdicts in
it). Checked on small real runs, so a metric added later without a direction fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.results.compare import profile_of

RUNS = {
    "booking": ["--limit", "6", "--trials", "2"],  # trials add pass^k metrics
    "clarq": ["--seeker", "oracle", "--limit", "6"],
    "bargain": ["--track", "scripted", "--labeller", "keyword", "--limit", "6"],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_metric_of_a_run_has_a_declared_direction(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    assert main(["run", name, *RUNS[name], "--quiet", "--out", str(out)]) == 0
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    profile = profile_of(name)
    assert metrics and profile.better_direction(profile.primary) == "higher"
    missing = [m for m in metrics if profile.better_direction(m) is None]
    assert missing == [], f"{name}: no better direction declared for {missing}"
