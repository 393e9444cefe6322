"""The Ray executor splits --max-concurrency over its workers in shares that add up to it
(issue 43.2), so a run never plays more at once than asked, whatever the number of workers.
The witness is the test model server's own count of calls in flight (one per episode)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.runner.executors import shares
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess


def test_shares_add_up_to_the_run_s_concurrency() -> None:
    assert shares(10, 4) == [3, 3, 2, 2]
    assert shares(128, 4) == [32, 32, 32, 32]
    assert shares(5, 2) == [3, 2]
    assert shares(1, 1) == [1]
    for total in range(1, 40):
        for workers in range(1, total + 1):
            split = shares(total, workers)
            assert sum(split) == total and max(split) - min(split) <= 1


def _ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def test_ray_never_plays_more_than_the_concurrency_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not _ray_available():
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is not installed but CI=true requires it")
        pytest.skip("Ray not installed")
    monkeypatch.setenv("RAY_DISABLE_USAGE_STATS", "1")
    config = ServerConfig(script=booking_script(), faults=FaultConfig(latency_ms=200))
    with ServerProcess(config) as server:
        models = tmp_path / "models.toml"
        models.write_text(f'[models.m]\nspec = "openai:m@{server.base_url}"\n')
        common = [
            "run", "booking", "--system", "monolithic", "--system-model", "m",
            "--models-file", str(models), "--limit", "14", "--limit-mode", "first",
            "--max-concurrency", "5", "--no-cache", "--no-review", "--quiet",
        ]  # fmt: skip
        # a private Ray of two CPUs: two workers, shares 3 and 2
        assert main([*common, "--executor", "ray", "--out", str(tmp_path / "ray")]) == 0
        peak = server.stats()["peak_in_flight"]
        assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert 0 < peak <= 5
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["sessions"][-1]["executor"].startswith("ray (")
    lines = (tmp_path / "ray" / "episodes.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["episode_id"] for x in lines) == sorted(
        json.loads(x)["episode_id"]
        for x in (tmp_path / "local" / "episodes.jsonl").read_text().splitlines()
    )
    summaries = [json.loads((tmp_path / d / "summary.json").read_text()) for d in ("ray", "local")]
    for summary in summaries:
        summary.pop("timing")
    for summary in summaries:  # the calls' measured latencies differ from run to run
        summary.pop("latency")
        summary["usage"]["system"].pop("latency_s")
    assert summaries[0] == summaries[1]
