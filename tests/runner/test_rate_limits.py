"""Back-off that gives up (issue 43, point 6).

A call waits at most its budget in all between attempts (``--max-retry-wait``, a models file's
``max_retry_wait_s``, default 60 s): a wait that would pass it is not started, the call fails.
A run whose endpoint answers only 429 ends with exit 5 and one line, whatever the Retry-After;
SIGTERM while a call waits, or while the run starts, exits 130 with the line saying how to
resume. Against the real test server process on 127.0.0.1; no timed assertion.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.backends.backend_helpers import FakeClock, user_request
from todeval.backends import InfrastructureError, ModelInfo, RetryingBackend, RetryPolicy
from todeval.backends.errors import TransientError
from todeval.backends.factory import model_info
from todeval.backends.spec import ModelEntry
from todeval.backends.types import DEFAULT_RETRY_WAIT_S, GenerationRequest, GenerationResult
from todeval.cli import main
from todeval.core.health import RATE_LIMITED_CALLS, RunHealth
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
INFO = ModelInfo(name="m", spec="scripted:m", backend="scripted", model="m")


class RateLimited:
    """Answers every call with a 429 asking to wait ``retry_after`` seconds."""

    def __init__(self, retry_after: float | None, info: ModelInfo = INFO) -> None:
        self.retry_after = retry_after
        self.calls = 0
        self.info = info

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        self.calls += 1
        raise TransientError("rate limited (429)", kind="rate_limit", retry_after=self.retry_after)

    async def aclose(self) -> None:
        return None


def _fail(backend: RetryingBackend) -> InfrastructureError:
    with pytest.raises(InfrastructureError) as caught:
        asyncio.run(backend.generate(user_request(), role="system"))
    return caught.value


def test_a_retry_after_past_the_budget_fails_the_call_at_once() -> None:
    inner, clock = RateLimited(100000), FakeClock()
    error = _fail(RetryingBackend(inner, clock=clock))
    assert inner.calls == 1 and clock.sleeps == []  # no wait was started
    assert error.kind == "rate_limit"
    assert "asks for a 100000 s wait" in error.cause
    assert f"of the {DEFAULT_RETRY_WAIT_S:g} s a call may wait in all" in error.cause


def test_the_waits_of_one_call_stop_at_its_budget() -> None:
    inner, clock = RateLimited(10), FakeClock()
    error = _fail(RetryingBackend(inner, policy=RetryPolicy(max_wait_s=25), clock=clock))
    assert clock.sleeps == [10, 10]  # a third 10 s wait would pass 25 s
    assert inner.calls == 3 and error.attempts == 3
    assert "more than the 5 s left of the 25 s" in error.cause


def test_the_budget_comes_from_the_policy_else_the_models_file() -> None:
    entry = ModelEntry(spec="scripted:m", max_retry_wait_s=15)
    info = model_info("m", entry)
    assert info.max_retry_wait_s == 15
    assert model_info("m", ModelEntry(spec="scripted:m")).max_retry_wait_s == DEFAULT_RETRY_WAIT_S
    clock = FakeClock()
    _fail(RetryingBackend(RateLimited(10, info), clock=clock))
    assert clock.sleeps == [10]
    clock = FakeClock()
    policy = RetryPolicy(max_wait_s=35)  # --max-retry-wait wins over the models file
    _fail(RetryingBackend(RateLimited(10, info), policy=policy, clock=clock))
    assert clock.sleeps == [10, 10, 10]


def test_rate_limits_stop_a_run_at_the_first_give_up_or_after_a_streak() -> None:
    health = RunHealth()
    health.call_failed("e", connection=False, cause="429", rate_limited=True)
    assert health.rate_limited() == ("e", "429", False)  # never answered: at once
    health = RunHealth()
    health.call_ok("e")
    for _ in range(RATE_LIMITED_CALLS - 1):
        health.call_failed("e", connection=False, cause="429", rate_limited=True)
    assert health.rate_limited() is None  # it answered before: a few may give up
    health.call_failed("e", connection=False, cause="429", rate_limited=True)
    assert health.rate_limited() == ("e", "429", True)
    health.call_ok("e")
    assert health.rate_limited() is None
    health.call_failed("e", connection=False, cause="500")  # not a rate limit
    assert health.rate_limited() is None


def _argv(url: str, out: Path, *extra: str) -> list[str]:
    return [
        "run", "booking", "--system", "monolithic", "--system-model", f"openai:m@{url}",
        "--limit", "3", "--no-cache", "--out", str(out), *extra,
    ]  # fmt: skip


def _episodes(out: Path) -> list[dict[str, object]]:
    path = out / "episodes.jsonl"
    text = path.read_text() if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("retry_after", "extra"),
    [(100000.0, ()), (0.2, ("--max-retry-wait", "0.5"))],
    ids=["huge-retry-after", "small-budget"],
)
def test_a_run_against_an_endpoint_answering_only_429_exits_5_with_one_line(
    retry_after: float,
    extra: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    faults = FaultConfig(error_429=1.0, retry_after_s=retry_after)
    with ServerProcess(ServerConfig(faults=faults)) as server:
        out = tmp_path / "run"
        assert main([*_argv(server.base_url, out, *extra), "--quiet"]) == 5
        requests = server.stats()["requests"]
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    line = lines[0]
    assert line.startswith(f"todeval: stopped: {server.base_url} is rate-limiting"), line
    assert "it answered no call" in line and "a call may wait in all" in line
    assert "of 3 episodes done" in line and "run the same command later" in line
    assert f"asks for a {retry_after:g} s wait" in line
    # every call gave up quickly: at most a few attempts per episode, never a long wait
    assert requests <= 3 * 3
    assert all(x["outcome"] == "infrastructure_error" for x in _episodes(out))


def test_a_models_file_sets_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = FaultConfig(error_429=1.0, retry_after_s=0.2)
    with ServerProcess(ServerConfig(faults=faults)) as server:
        models = tmp_path / "models.toml"
        models.write_text(
            f'[models.m]\nspec = "openai:m@{server.base_url}"\nmax_retry_wait_s = 0.3\n'
        )
        out = tmp_path / "run"
        argv = ["run", "booking", "--system", "monolithic", "--system-model", "m",
                "--models-file", str(models), "--limit", "2", "--no-cache", "--out", str(out),
                "--quiet"]  # fmt: skip
        assert main(argv) == 5
    line = capsys.readouterr().err.strip()
    assert "more than the 0.1 s left of the 0.3 s a call may wait in all" in line, line


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _todeval(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "todeval", *argv],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _stopped(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    return err.strip().splitlines()[-1]


def test_sigterm_while_a_call_waits_exits_130_with_the_resume_line(tmp_path: Path) -> None:
    # every call is asked to wait 30 s: within the default budget, so the calls wait
    faults = FaultConfig(error_429=1.0, retry_after_s=30)
    with ServerProcess(ServerConfig(faults=faults)) as server:
        out = tmp_path / "run"
        proc = _todeval(_argv(server.base_url, out))
        try:
            deadline = time.monotonic() + 120
            while server.stats()["requests"] < 1:  # the first attempt was answered 429
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no call reached the server"
                time.sleep(0.05)
            time.sleep(0.3)  # inside the 30 s wait
            last = _stopped(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert last.startswith("todeval: interrupted (SIGTERM): 0 of 3 episodes done"), last
    assert last.endswith("resume with the same command")


def _has_loaded(pid: int, library: str) -> bool:
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("after_s", [0.0, 0.2])
def test_sigterm_during_start_up_exits_130_with_the_resume_line(
    after_s: float, tmp_path: Path
) -> None:
    """Once todeval's code runs (its first compiled dependency is loaded, so its handlers are
    installed) a SIGTERM is no longer the default kill: exit 130 and the resume line."""
    # slow replies: a signal that lands after the start-up finds the run waiting, not done
    with ServerProcess(ServerConfig(faults=FaultConfig(latency_ms=2000))) as server:
        proc = _todeval(_argv(server.base_url, tmp_path / "run"))
        try:
            deadline = time.monotonic() + 120
            while not _has_loaded(proc.pid, "pydantic_core"):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "todeval never started"
                time.sleep(0.005)
            time.sleep(after_s)
            last = _stopped(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert last.startswith("todeval: interrupted") and "resume with the same command" in last
