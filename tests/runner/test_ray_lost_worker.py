"""A run on a local multi-node Ray cluster survives its worker nodes being killed mid-run.

Booking with an LLM system against the test model server (a real HTTP process on 127.0.0.1),
episodes on a head without CPUs plus two worker nodes, each a ``ray start`` process group.
Killing one worker node mid-run: its episodes are played again on the other. Killing the last:
the run stops with exit 5 and the resume line, writing no episode it did not finish. A new node
joins and the same command finishes the run: every episode once, none lost, none twice.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from todeval.errors import EXIT_OK, EXIT_RETRY
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

EPISODES = 10


def _cluster_class() -> type:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is not installed but CI=true requires it")
        pytest.skip("Ray not installed")
    from todeval.testing.ray_cluster import LocalRayCluster

    return LocalRayCluster


def _lines(run: Path) -> list[dict[str, object]]:
    path = run / "episodes.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


def _wait_for(run: Path, count: int, process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 60
    while len(_lines(run)) < count:
        assert process.poll() is None, f"the run ended before {what}: {process.stderr}"
        assert time.monotonic() < deadline, f"no {count} episodes in 60 s ({what})"
        time.sleep(0.1)


def test_a_lost_worker_loses_nothing_and_resume_finishes(tmp_path: Path) -> None:
    cluster_class = _cluster_class()
    server_config = ServerConfig(script=booking_script(), faults=FaultConfig(latency_ms=100))
    with ServerProcess(server_config) as server, cluster_class(workers=2) as cluster:
        models = tmp_path / "models.toml"
        models.write_text(
            f'[models.m]\nspec = "openai:m@{server.base_url}"\nconnection_limit = 64\n'
        )
        run = tmp_path / "run"
        command = [
            sys.executable,
            "-m",
            "todeval",
            "run",
            "booking",
            "--system",
            "monolithic",
            "--system-model",
            "m",
            "--models-file",
            str(models),
            "--limit",
            str(EPISODES),
            "--max-concurrency",
            "2",
            "--no-cache",
            "--no-review",
            "--quiet",
            "--executor",
            "ray",
            "--ray-address",
            cluster.address,
            "--out",
            str(run),
        ]
        first = subprocess.Popen(
            command, env=cluster.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            _wait_for(run, 2, first, "the first kill")
            cluster.kill_node(0)  # episodes in flight there are played on the other node
            after_first = len(_lines(run))
            _wait_for(run, after_first + 2, first, "the second kill")
            cluster.kill_node(1)  # nowhere left: the run stops, keeping what finished
            joining = cluster.add_node(wait=False)  # for the resume, started meanwhile
            _, err = first.communicate(timeout=60)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        assert first.returncode == EXIT_RETRY, err
        message = err.strip().splitlines()
        assert len(message) == 1, err
        assert "all 2 Ray workers were lost" in message[0]
        assert "resume with the same command" in message[0]
        kept = _lines(run)
        assert after_first + 2 <= len(kept) < EPISODES
        assert all(r["outcome"] != "infrastructure_error" for r in kept)

        cluster.wait_joined(joining)
        resumed = subprocess.run(
            command, env=cluster.env(), capture_output=True, text=True, timeout=120, check=False
        )
        assert resumed.returncode == EXIT_OK, resumed.stderr
        lines = _lines(run)
        keys = [(r["task_id"], r["trial"]) for r in lines]
        assert len(keys) == EPISODES == len(set(keys))  # none lost, none twice
        assert all(r["outcome"] != "infrastructure_error" for r in lines)
        assert lines[: len(kept)] == kept  # the first session's episodes kept as written
        summary = json.loads((run / "summary.json").read_text())
        assert summary["n_episodes"] == EPISODES
        sessions = json.loads((run / "manifest.json").read_text())["sessions"]
        assert [s["executor"] for s in sessions] == [
            "ray (2 workers on 2 nodes)",
            "ray (1 worker on 1 node)",
        ]
        assert [s["episodes_run"] for s in sessions] == [len(kept), EPISODES - len(kept)]


def test_workers_go_to_the_nodes_in_turn_and_never_to_a_node_without_cpus() -> None:
    from todeval.runner.executors import spread

    assert spread([("a", 2), ("b", 1)], 3) == ["a", "b", "a"]
    assert spread([("a", 1), ("b", 1)], 4) == ["a", "b", "a", "b"]
    assert spread([("head", 0), ("a", 1), ("b", 1)], 2) == ["a", "b"]
    assert spread([("head", 0)], 2) == []
