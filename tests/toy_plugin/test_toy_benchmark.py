"""The toy benchmark, a third-party plug-in installed with ``pip install -e tests/toy_plugin``,
runs through every shared mechanism with no edit outside its folder: entry-point registration
and its own sub-command, trials and pass^k, resume after kill -9, Ray, prompt overrides,
protocols, a person at the terminal (tmux), and crashes of the agent under test."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.metadata import entry_points
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from todeval_toy.game import load_tasks

from tests.toy_plugin.players import CrashEveryThird
from todeval.backends import Script, ScriptedReply
from todeval.cli import main
from todeval.registry import discover
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess
from todeval.testing.tmux import Tmux

ROOT = Path(__file__).resolve().parents[2]
TASKS = {t.task_id: t for t in load_tasks()}
CI = os.environ.get("CI") == "true"


def _need(what: str, available: bool) -> None:
    """Skip without an optional part, except under CI=true, where it must be there."""
    if not available:
        if CI:
            pytest.fail(f"{what} is missing but CI=true requires it")
        pytest.skip(f"{what} not available")


def _episodes(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def _summary(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "summary.json").read_text())
    data.pop("timing")  # the only field allowed to differ between equal runs
    return data


def _manifest(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "manifest.json").read_text())
    return data


def _toy(*args: str) -> int:
    return main(["run", "toy", "--quiet", *args])


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", **extra}


# 1. registration through the entry point, and the toy's own sub-command


def test_registered_through_the_entry_point(tmp_path: Path) -> None:
    (point,) = [ep for ep in entry_points(group="todeval.benchmarks") if ep.name == "toy"]
    assert point.value == "todeval_toy.game:SPEC"  # the spec alone: no plug-in module
    registry = discover()
    assert registry.benchmarks["toy"].spec == "todeval_toy.game:SPEC"
    assert registry.benchmarks["toy"].help.startswith("number guessing")  # its summary
    # discovery imports none of it (its spec is imported when a toy command runs)
    code = "import sys; from todeval.registry import discover; discover(); print(*sys.modules)"
    imported = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.split()
    assert not {"todeval_toy", "todeval_toy.game", "todeval.spec"} & set(imported)
    # a fresh process outside the repository finds it too
    help_text = subprocess.run(
        [sys.executable, "-m", "todeval.cli", "run", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert re.search(r"^\s+toy\s+number guessing", help_text, re.MULTILINE)


def test_run_options_come_from_the_shared_layer(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "toy", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--trials", "--executor", "--prompts", "--protocol", "--guesser-model"):
        assert option in text
    assert "{standard,strict}" in text


# 2. trials: k episodes per task and pass^k


def test_trials_give_k_episodes_per_task_and_pass_k(tmp_path: Path) -> None:
    run = tmp_path / "k3"
    assert _toy("--guesser", "random", "--trials", "3", "--out", str(run)) == 0
    episodes = _episodes(run)
    by_task: dict[str, list[float]] = {}
    for e in episodes:
        by_task.setdefault(e["task_id"], []).append(e["metrics"]["toy.success"])
    assert len(episodes) == 90
    assert sorted((e["task_id"], e["trial"]) for e in episodes) == sorted(
        (t, k) for t in TASKS for k in range(3)
    )
    # the trials differ (the guesser's stream depends on the trial), so pass^k is not trivial
    assert any(0 < sum(v) < 3 for v in by_task.values())
    metrics = _summary(run)["metrics"]
    all_three = sum(1 for v in by_task.values() if sum(v) == 3) / 30
    assert metrics["toy.success.pass^3"]["micro"]["value"] == pytest.approx(all_three)
    assert "toy.success.pass^2" in metrics
    assert metrics["toy.success"]["micro"]["n"] == 90
    # the same command gives the same results
    again = tmp_path / "again"
    assert _toy("--guesser", "random", "--trials", "3", "--out", str(again)) == 0
    assert _summary(again) == _summary(run)


# 3. kill -9 mid-run, then the same command again


def test_resume_after_kill_9_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    args = ["--guesser", "tests.toy_plugin.players:SlowRandom", "--trials", "2"]
    reference = tmp_path / "reference"
    assert _toy(*args, "--out", str(reference)) == 0
    run = tmp_path / "killed"
    cmd = [sys.executable, "-m", "todeval.cli", "run", "toy", *args, "--out", str(run)]
    cmd += ["--max-concurrency", "2", "--quiet"]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,  # the test guesser is imported from the repository
        env=_env(TOY_TEST_DELAY="0.05"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    episodes = run / "episodes.jsonl"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if episodes.exists() and episodes.read_bytes().count(b"\n") >= 8:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = episodes.read_bytes().count(b"\n")
    assert 8 <= before < 60
    done = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    keys = [(e["task_id"], e["trial"]) for e in _episodes(run)]
    assert len(keys) == len(set(keys)) == 60
    assert set(keys) == {(e["task_id"], e["trial"]) for e in _episodes(reference)}
    sessions = _manifest(run)["sessions"]
    assert len(sessions) == 2
    assert sessions[1]["episodes_run"] == 60 - before
    assert _summary(run) == _summary(reference)


# 4. Ray


def _ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def test_ray_executor_gives_the_local_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need("Ray", _ray_available())
    monkeypatch.setenv("RAY_DISABLE_USAGE_STATS", "1")
    args = ["--guesser", "random", "--trials", "2", "--max-concurrency", "4"]
    assert _toy(*args, "--out", str(tmp_path / "local")) == 0
    assert _toy(*args, "--out", str(tmp_path / "ray"), "--executor", "ray") == 0
    assert _summary(tmp_path / "ray") == _summary(tmp_path / "local")
    assert _manifest(tmp_path / "ray")["sessions"][-1]["executor"].startswith("ray (")

    def played(run: Path) -> dict[tuple[str, int], Any]:
        return {(e["task_id"], e["trial"]): e["details"]["guesses"] for e in _episodes(run)}

    assert played(tmp_path / "ray") == played(tmp_path / "local")


# 5. prompts as files: --prompts DIR


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """A local OpenAI-compatible server whose model always guesses 5."""
    script = Script(default=ScriptedReply(text='{"guess": 5}'))
    with ServerProcess(ServerConfig(script=script)) as running:
        yield running


def _llm_run(server: ServerProcess, out: Path, *extra: str) -> list[dict[str, Any]]:
    """Run the first two tasks (range 10) with the llm guesser; the request bodies the server
    received for it."""
    seen = len(server.requests())
    model = f"openai:scripted@{server.base_url}"
    code = _toy("--guesser", "llm", "--guesser-model", model, "--limit", "2", "--limit-mode",
                "first", "--no-cache", "--out", str(out), *extra)  # fmt: skip
    assert code == 0
    return [r["body"] for r in server.requests()[seen:]]


def test_prompt_override_reaches_the_model(tmp_path: Path, server: ServerProcess) -> None:
    default = _llm_run(server, tmp_path / "default")
    template = files("todeval_toy").joinpath("prompts/guesser.txt").read_text().rstrip("\n")
    first = template.replace("${low}", "1").replace("${high}", "10").replace("${max_guesses}", "5")
    assert len(default) == 10  # two tasks, five guesses each (the secrets are not 5)
    assert {b["messages"][0]["content"] for b in default} == {first}
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "guesser.txt").write_text(
        'ZEBRA rules: a number in ${low}..${high}, ${max_guesses} tries, reply {"guess": n}\n'
    )
    changed = _llm_run(server, tmp_path / "changed", "--prompts", str(prompts))
    assert len(changed) == 10
    assert {b["messages"][0]["content"] for b in changed} == {
        'ZEBRA rules: a number in 1..10, 5 tries, reply {"guess": n}'
    }

    # the other template (the host's answers) is untouched
    def later(bodies: list[dict[str, Any]]) -> set[str]:
        return {m["content"] for b in bodies for m in b["messages"][1:] if m["role"] == "user"}

    assert later(changed) == later(default)
    assert "My number is higher than 5. Guesses left: 4." in " ".join(later(default))
    old, new = _manifest(tmp_path / "default"), _manifest(tmp_path / "changed")
    assert old["config_hash"] != new["config_hash"]
    assert old["config"]["prompts_sha256"] != new["config"]["prompts_sha256"]
    assert new["config"]["prompt_overrides"]["guesser"].startswith("ZEBRA")
    (episode, *_) = _episodes(tmp_path / "changed")
    assert episode["termination"] == "turn_cap"
    assert episode["usage"]["guesser"]["calls"] == 5


def test_prompt_with_unknown_placeholder_is_one_line_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "guesser.txt").write_text("${low} ${high} ${max_guesses} and ${secret}\n")
    out = tmp_path / "run"
    assert _toy("--guesser", "llm", "--prompts", str(prompts), "--out", str(out)) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "guesser.txt" in err and "${secret}" in err
    assert not out.exists()


# protocols and format violations (scripted model file)


def _scripted(tmp_path: Path, reply: str) -> str:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps([reply]))
    return f"scripted:{path}"


def test_unreadable_reply_is_a_violation_that_aborts(tmp_path: Path) -> None:
    model = _scripted(tmp_path, "I think it is five")
    run = tmp_path / "run"
    code = _toy("--guesser", "llm", "--guesser-model", model, "--limit", "3", "--out", str(run))
    assert code == 0
    for e in _episodes(run):
        assert (e["outcome"], e["termination"]) == ("aborted", "format_violation")
        kinds = [v["kind"] for v in e["events"]]
        assert kinds == ["model_call", "violation", "episode_end"]  # the call is recorded
        assert e["events"][0]["data"]["reply"] == "I think it is five"
        assert e["metrics"]["toy.success"] == 0.0
    assert _summary(run)["metrics"]["toy.success"]["micro"]["n"] == 3


def test_strict_protocol_makes_out_of_range_guesses_violations(tmp_path: Path) -> None:
    model = _scripted(tmp_path, '{"guess": 0}')
    common = ["--guesser", "llm", "--guesser-model", model, "--limit", "2"]
    assert _toy(*common, "--out", str(tmp_path / "standard")) == 0
    assert _toy(*common, "--protocol", "strict", "--out", str(tmp_path / "strict")) == 0
    assert {e["termination"] for e in _episodes(tmp_path / "standard")} == {"turn_cap"}
    strict = _episodes(tmp_path / "strict")
    assert {(e["outcome"], e["termination"], e["turns"]) for e in strict} == {
        ("aborted", "format_violation", 1)
    }
    standard, strict_manifest = _manifest(tmp_path / "standard"), _manifest(tmp_path / "strict")
    assert (standard["config"]["protocol"], strict_manifest["config"]["protocol"]) == (
        "standard",
        "strict",
    )
    assert standard["config_hash"] != strict_manifest["config_hash"]


# 6. a person plays the guesser in a terminal (tmux)


def test_a_person_plays_the_guesser_under_tmux(tmp_path: Path) -> None:
    _need("tmux", shutil.which("tmux") is not None)
    out = tmp_path / "human"
    command = [sys.executable, "-m", "todeval.cli", "run", "toy", "--guesser", "human"]
    command += ["--limit", "1", "--limit-mode", "first", "--out", str(out)]
    shell = f"cd {shlex.quote(str(ROOT))} && {shlex.join(command)}; echo EXIT=$?; sleep 30"
    tmux = Tmux(f"todeval-toy-{os.getpid()}")
    sent: list[int] = []
    try:
        tmux.start(shell)
        low, high = 1, TASKS["n10-00"].high
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            screen = tmux.screen()
            if "EXIT=" in screen:
                break
            answers = re.findall(r"^host: (higher|lower)$", screen, re.MULTILINE)
            prompts = len(re.findall(r"^guesser> ", screen, re.MULTILINE))
            if prompts == len(sent) + 1 and len(answers) == len(sent):  # waiting for a guess
                if sent and answers[-1] == "higher":
                    low = sent[-1] + 1
                elif sent:
                    high = sent[-1] - 1
                sent.append((low + high) // 2)
                tmux.type(str(sent[-1]))
            time.sleep(0.05)
        screen = tmux.screen()
    finally:
        tmux.close()
    assert "EXIT=0" in screen, screen
    assert "new dialogue with host (/quit gives up)" in screen
    assert "=== dialogue ended: success" in screen  # the outcome is shown to the person
    assert "in flight" not in screen  # interactive: no progress line over the dialogue
    (episode,) = _episodes(out)
    assert episode["outcome"] == "success"
    assert episode["details"]["guesses"] == sent
    assert sent[-1] == TASKS["n10-00"].secret
    assert _manifest(out)["players"]["guesser"] == "human"


# 7. the agent under test crashing is its failure, never an excluded episode


def test_a_crashing_guesser_is_scored_as_system_error(tmp_path: Path) -> None:
    CrashEveryThird.started = 0
    run = tmp_path / "crash"
    args = ["--guesser", "tests.toy_plugin.players:CrashEveryThird", "--max-concurrency", "1"]
    assert _toy(*args, "--out", str(run)) == 0
    episodes = _episodes(run)
    crashed = [e["task_id"] for e in episodes if e["outcome"] == "system_error"]
    assert crashed == list(TASKS)[2::3]
    for e in episodes:
        if e["outcome"] == "system_error":
            assert e["termination"] == "system_error"
            assert "RuntimeError: guesser broke" in e["reason"]
    summary = _summary(run)
    assert summary["outcomes"]["system_error"] == 10
    assert summary["outcomes"]["success"] == 20
    assert summary["excluded"] == {}
    success = summary["metrics"]["toy.success"]["micro"]
    assert (success["n"], success["value"]) == (30, pytest.approx(20 / 30))
    # never re-run on resume: the same command finds the run complete
    assert _toy(*args, "--out", str(run)) == 0
    assert CrashEveryThird.started == 30
    assert len(_episodes(run)) == 30
