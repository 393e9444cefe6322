"""End-to-end runs through the CLI with test players (oracle system and user)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from todeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
ORACLE = [
    "--system",
    "tests.booking.scripted:OracleSystem",
    "--user",
    "tests.booking.scripted:OracleUser",
]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _summary_without_timing(path: Path) -> dict:
    data = json.loads((path / "summary.json").read_text())
    data.pop("timing")
    for usage in data["usage"].values():
        usage.pop("latency_s")
    return data


def test_oracle_books_every_feasible_goal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(ROOT))
    out = tmp_path / "run"
    assert main(["run", "booking", *ORACLE, "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_episodes"] == 117
    assert summary["metrics"]["booking.booking_accuracy"]["micro"]["value"] == 1.0
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 117 and len({json.loads(x)["episode_id"] for x in lines}) == 117
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["system"] == ORACLE[1] and len(manifest["sessions"]) == 1
    # running again says so and prints the stored summary
    capsys.readouterr()
    assert main(["run", "booking", *ORACLE, "--out", str(out)]) == 0
    assert "already holds a complete run" in capsys.readouterr().out


def test_same_seed_same_summary(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert (
            main(
                [
                    "run",
                    "booking",
                    "--limit",
                    "12",
                    "--out",
                    str(tmp_path / name),
                    "--quiet",
                    "--max-concurrency",
                    "4" if name == "a" else "1",
                ]
            )
            == 0
        )
    assert _summary_without_timing(tmp_path / "a") == _summary_without_timing(tmp_path / "b")


def test_resume_with_different_config_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "run")
    assert main(["run", "booking", "--limit", "2", "--out", out, "--quiet"]) == 0
    assert main(["run", "booking", "--limit", "2", "--seed", "1", "--out", out, "--quiet"]) == 4
    assert "seed" in capsys.readouterr().err


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "booking", "--tasks", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "test" in err and "unrealistic" in err
    assert main(["run", "booking", "--system", "bogus"]) == 2
    assert "rule" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["run", "nosuchbenchmark"])
    assert exc.value.code == 2


def test_kill_midway_keeps_finished_episodes_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "todeval.cli",
        "run",
        "booking",
        *ORACLE,
        "--out",
        str(out),
        "--max-concurrency",
        "2",
        "--quiet",
    ]
    proc = subprocess.Popen(
        cmd,
        env=_env(TODEVAL_TEST_DELAY="0.05"),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if episodes.exists() and episodes.read_text().count("\n") >= 10:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    text = episodes.read_text()
    complete = [line for line in text.split("\n")[:-1]]
    assert 10 <= len(complete) < 117
    for line in complete:
        json.loads(line)
    # resume finishes the rest without duplicates and records a second session
    done = subprocess.run(
        cmd, env=_env(), cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    ids = [json.loads(x)["episode_id"] for x in episodes.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 117
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["sessions"]) == 2
    assert (
        json.loads((out / "summary.json").read_text())["metrics"]["booking.booking_accuracy"][
            "micro"
        ]["value"]
        == 1.0
    )


def test_torn_last_line_is_tolerated(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "booking", *ORACLE, "--limit", "3", "--out", str(out), "--quiet"]) == 0
    episodes = out / "episodes.jsonl"
    lines = episodes.read_text().splitlines()
    episodes.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])
    assert main(["run", "booking", *ORACLE, "--limit", "3", "--out", str(out), "--quiet"]) == 0
    ids = [json.loads(x)["episode_id"] for x in episodes.read_text().splitlines()]
    assert len(ids) == 3


def test_a_crashing_system_is_scored_over_all_tasks(tmp_path: Path) -> None:
    """A system that raises on every third task: those episodes are system errors, counted as
    failures in every metric, and a resume does not re-run them."""
    sys.path.insert(0, str(ROOT))
    flaky = ["--system", "tests.booking.scripted:FlakyOracleSystem", *ORACLE[2:]]
    out = tmp_path / "flaky"
    assert main(["run", "booking", *flaky, "--out", str(out), "--quiet"]) == 0
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    crashed = [r for r in records if r["outcome"] == "system_error"]
    assert 20 <= len(crashed) <= 60 and len(records) == 117
    assert all(r["termination"] == "system_error" for r in crashed)
    assert all(r["labels"]["failure_class"] == "system_error" for r in crashed)
    summary = json.loads((out / "summary.json").read_text())
    accuracy = summary["metrics"]["booking.booking_accuracy"]["micro"]
    assert accuracy["n"] == 117 and summary["excluded"] == {}
    assert accuracy["value"] == pytest.approx((117 - len(crashed)) / 117)
    assert summary["outcomes"]["system_error"] == len(crashed)
    # resuming runs nothing: system errors are results, not episodes to retry
    assert main(["run", "booking", *flaky, "--out", str(out), "--quiet"]) == 0
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 117
