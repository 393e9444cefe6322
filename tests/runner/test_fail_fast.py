"""Failing fast and saying why (issue 16, finding 6), for every benchmark that calls a model.

Against the real test server process on 127.0.0.1: a refused key (401/403) or an unknown model
(404) stops the run at the first refused call with one line and exit 2, keeping nothing the
refusal touched; a closed port stops it after the retry policy of the first episodes with exit
2; a run that finishes with infrastructure errors says how many and the first cause, exit 5.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from todeval.backends.retry import SystemClock
from todeval.cli import main
from todeval.core.health import UNREACHABLE_AFTER_EPISODES
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess, unused_port

# every benchmark, with the options that make one of its players call a model
BENCHMARKS = {
    "booking": ["run", "booking", "--system", "monolithic", "--system-model"],
    "clarq": ["run", "clarq", "--seeker", "llm", "--seeker-model"],
    "bargain": ["run", "bargain", "--track", "craigslist", "--model"],
    "multiwoz-turns": ["run", "multiwoz-turns", "--model"],
    "incar-turns": ["run", "incar-turns", "--model"],
    "toy": ["run", "toy", "--guesser", "llm", "--guesser-model"],
}


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry policy runs in full, without waiting between attempts."""

    async def no_wait(self: SystemClock, seconds: float) -> None:
        return None

    monkeypatch.setattr(SystemClock, "sleep", no_wait)


def _argv(benchmark: str, spec: str, out: Path, limit: int = 4) -> list[str]:
    options = ["--limit", str(limit), "--no-cache", "--out", str(out), "--quiet"]
    return [*BENCHMARKS[benchmark], spec, *options]


def _lines(out: Path) -> list[dict[str, object]]:
    path = out / "episodes.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def refusing() -> Iterator[dict[int, str]]:
    """Three servers: 401 (a key is expected, none sent), 403 and 404 (unknown model)."""
    servers = {
        401: ServerProcess(ServerConfig(api_key="the-right-key")),
        403: ServerProcess(ServerConfig(answer_status=403)),
        404: ServerProcess(ServerConfig(models=["known"])),
    }
    try:
        yield {status: server.start().base_url for status, server in servers.items()}
    finally:
        for server in servers.values():
            server.close()


@pytest.mark.parametrize("bench", sorted(BENCHMARKS))
@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refused_call_stops_the_run_at_once_exit_2(
    bench: str,
    status: int,
    refusing: dict[int, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = refusing[status]
    out = tmp_path / "run"
    started = time.monotonic()
    assert main(_argv(bench, f"openai:unknown@{url}", out, limit=6)) == 2
    assert time.monotonic() - started < 30
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith("todeval: error: ") and url in line and str(status) in line
    assert "stopped at the first refused call" in line
    # nothing the refusal touched was kept (it would have been scored, or re-run for ever)
    assert _lines(out) == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"][-1]["episodes_run"] == 0


@pytest.mark.parametrize("bench", sorted(BENCHMARKS))
def test_a_refused_connection_stops_after_the_first_episodes_exit_2(
    bench: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    out = tmp_path / "run"
    n = UNREACHABLE_AFTER_EPISODES
    assert main([*_argv(bench, f"openai:m@{url}", out, limit=12), "--max-concurrency", "1"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert url in line and f"answered none of the calls of the first {n} episodes" in line
    lines = _lines(out)
    # the first N episodes are kept as infrastructure errors (re-run on resume), no more ran
    assert len(lines) == n
    assert {x["outcome"] for x in lines} == {"infrastructure_error"}


@pytest.mark.parametrize("limit", [1, 2])
def test_an_unreachable_model_stops_a_run_of_fewer_episodes_too(
    limit: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    out = tmp_path / "run"
    bench = sorted(BENCHMARKS)[0]
    assert main(_argv(bench, f"openai:m@{url}", out, limit=limit)) == 2
    line = _one_error_line(capsys.readouterr().err)
    first = "the only episode" if limit == 1 else f"the first {limit} episodes"
    assert url in line and f"answered none of the calls of {first} (" in line
    assert {x["outcome"] for x in _lines(out)} == {"infrastructure_error"}  # re-run on resume


@pytest.mark.parametrize("bench", sorted(BENCHMARKS))
def test_a_run_ending_with_infrastructure_errors_exits_5(
    bench: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every call answers 500: the endpoint is reachable, so the run goes on to the end
    with ServerProcess(ServerConfig(faults=FaultConfig(error_500=1.0))) as server:
        out = tmp_path / "run"
        assert main(_argv(bench, f"openai:m@{server.base_url}", out, limit=4)) == 5
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err
    lines = _lines(out)
    failed = [x for x in lines if x["outcome"] == "infrastructure_error"]
    assert failed, lines
    noun = "episode" if len(failed) == 1 else "episodes"
    assert last.startswith(f"todeval: finished; {len(failed)} {noun} to retry")
    assert "server error 500" in last and last.endswith("run the same command")


def test_a_refusal_on_a_ray_actor_stops_the_run_too(
    refusing: dict[int, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is not installed but CI=true requires it")
        pytest.skip("Ray not installed")
    monkeypatch.setenv("RAY_DISABLE_USAGE_STATS", "1")
    out = tmp_path / "run"
    argv = _argv("booking", f"openai:unknown@{refusing[404]}", out, limit=6)
    assert main([*argv, "--executor", "ray", "--max-concurrency", "2"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]  # Ray may print notes of its own first
    assert "answered 404" in line and "stopped at the first refused call" in line
    assert _lines(out) == []


def test_a_wrong_base_url_path_stops_the_run_at_once(
    refusing: dict[int, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = refusing[404].removesuffix("/v1") + "/not-the-api"  # the server answers 404
    out = tmp_path / "run"
    assert main(_argv("booking", f"openai:known@{wrong}", out)) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert wrong in line and "404" in line and "wrong base URL" in line
    assert _lines(out) == []
