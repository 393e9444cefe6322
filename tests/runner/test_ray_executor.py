"""The Ray executor on a local cluster gives the same summary as the local executor."""

import json
import os
from pathlib import Path

import pytest

from todeval.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _strip(path: Path) -> dict:
    data = json.loads((path / "summary.json").read_text())
    data.pop("timing")
    return data


def test_ray_matches_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not _ray_available():
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is not installed but CI=true requires it")
        pytest.skip("Ray not installed")
    monkeypatch.setenv("RAY_DISABLE_USAGE_STATS", "1")
    common = ["run", "booking", "--limit", "20", "--quiet", "--max-concurrency", "4"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray"), "--executor", "ray"]) == 0
    assert _strip(tmp_path / "local") == _strip(tmp_path / "ray")
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["sessions"][-1]["executor"].startswith("ray (")
    lines = (tmp_path / "ray" / "episodes.jsonl").read_text().splitlines()
    assert len({json.loads(x)["episode_id"] for x in lines}) == 20
