"""``--isolate``: a ``package.module:Class`` player in the bubblewrap sandbox cannot read the
package's data, the run directory, the cache folder or the evaluator's environment (issue 45,
point 6). Real parts: the CLI in a subprocess, bubblewrap (Debian ``bubblewrap``, installed by
``.ci/run``; required, never skipped)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _run(
    tmp_path: Path, out: Path, seeker: str, *more: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "TODEVAL_CACHE_DIR": str(tmp_path / "cache")}
    full.update(env or {})
    cmd = [
        sys.executable,
        "-m",
        "todeval",
        "run",
        "clarq",
        "--seeker",
        seeker,
        "--provider",
        "rule",
    ]
    cmd += ["--limit", "4", "--out", str(out), "--quiet", *more]
    return subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True, timeout=300)


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def _channel_of(out: Path, role: str) -> str:
    return str(json.loads((out / "manifest.json").read_text())["roles"][role]["channel"])


def _channel(out: Path) -> str:
    return _channel_of(out, "seeker")


def _s(out: Path) -> float:
    return float(_summary(out)["metrics"]["clarq.success"]["micro"]["value"])


def test_bubblewrap_is_installed() -> None:
    assert shutil.which("bwrap"), "install bubblewrap (apt install bubblewrap): --isolate needs it"


def test_the_reading_seeker_scores_in_process_and_finds_nothing_isolated(tmp_path: Path) -> None:
    seeker = "tests.isolation.reading_seeker:ReadingSeeker"
    done = _run(tmp_path, tmp_path / "in", seeker)
    assert done.returncode == 0, done.stderr
    assert _s(tmp_path / "in") == 1.0 and _channel(tmp_path / "in") == "in-process"
    done = _run(tmp_path, tmp_path / "iso", seeker, "--isolate")
    assert done.returncode == 0, done.stderr
    assert _s(tmp_path / "iso") == 0.0 and _channel(tmp_path / "iso") == "isolated"
    assert "reading seeker: no task data" in done.stderr
    builtin = json.loads((tmp_path / "iso" / "manifest.json").read_text())["roles"]["provider"]
    assert builtin["channel"] == "built-in"


def _snooped(out: Path) -> dict[str, Any]:
    for line in (out / "episodes.jsonl").read_text().splitlines():
        for event in json.loads(line)["events"]:
            text = str(event.get("data", {}).get("text", ""))
            found = re.search(r"SNOOP (\{.*\})", text)
            if found:
                return dict(json.loads(found.group(1)))
    raise AssertionError("the snooper's report is not in the transcript")


def test_the_sandbox_hides_data_run_directory_cache_and_environment(tmp_path: Path) -> None:
    env = {
        "TODEVAL_CANARY": "canary-7f3a",
        "TODEVAL_PASSED": "passed-by-name",
        "SNOOP_RUN_DIR": str(tmp_path / "snoop"),
        "SNOOP_CACHE": str(tmp_path / "cache"),
    }
    seeker = "tests.isolation.snooper:Snooper"
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "secret-file").write_text("x")
    done = _run(tmp_path, tmp_path / "snoop", seeker, env=env)
    assert done.returncode == 0, done.stderr
    seen = _snooped(tmp_path / "snoop")  # in-process it reads everything: the probe works
    assert seen["data"] and "clarq" in seen["data"]
    assert seen["run_dir"] and seen["cache"] and seen["canary"] == "canary-7f3a"
    passing = ["--isolate-env", "SNOOP_RUN_DIR", "--isolate-env", "SNOOP_CACHE"]
    passing += ["--isolate-env", "TODEVAL_PASSED"]
    done = _run(
        tmp_path,
        tmp_path / "snoop-iso",
        seeker,
        "--isolate",
        *passing,
        env={**env, "SNOOP_RUN_DIR": str(tmp_path / "snoop-iso")},
    )
    assert done.returncode == 0, done.stderr
    seen = _snooped(tmp_path / "snoop-iso")
    assert seen["data"] == []  # an empty tmpfs over the package's data
    assert seen["run_dir"] is None and seen["cache"] is None
    assert seen["canary"] is None and seen["passed"] == "passed-by-name"
    assert seen["home"] == [] or set(seen["home"]) <= {"todeval-cache"}


def test_isolate_without_bubblewrap_is_a_usage_error(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    done = _run(
        tmp_path,
        tmp_path / "x",
        "tests.isolation.snooper:Snooper",
        "--isolate",
        env={"PATH": str(bare)},
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("todeval: error: --isolate needs bubblewrap")
    )
    assert "Traceback" not in done.stderr


def test_an_isolated_system_reads_its_world_but_no_goal(tmp_path: Path) -> None:
    """A booking system's role declares its back-end (schema, databases, packs) readable: the
    rule system played by reference in the sandbox scores as it does in-process."""
    full = {**os.environ, "TODEVAL_CACHE_DIR": str(tmp_path / "cache")}
    scores = {}
    for name, more in (("in", []), ("iso", ["--isolate"])):
        cmd = [sys.executable, "-m", "todeval", "run", "booking", "--system"]
        cmd += ["todeval.benchmarks.booking.systems.rule:RuleSystem", "--limit", "4"]
        cmd += ["--out", str(tmp_path / name), "--quiet", *more]
        done = subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        metrics = _summary(tmp_path / name)["metrics"]
        scores[name] = {
            k: metrics[k]["micro"]["value"] for k in ("booking.booking_accuracy", "booking.inform")
        }
    assert scores["iso"] == scores["in"] == {"booking.booking_accuracy": 1.0, "booking.inform": 1.0}
    assert _channel_of(tmp_path / "iso", "system") == "isolated"


def test_public_data_names_no_goal() -> None:
    from todeval.benchmarks.booking.players import SYSTEM
    from todeval.dialogue.isolation import public_paths

    names = {p.name for p in public_paths(SYSTEM.public_data)}
    assert "schema.json" in names and "db" in names and "cars.csv" in names
    assert not names & {"tasks.json", "booking_tasks", "corpus"}


def test_a_resume_keeps_the_channel(tmp_path: Path) -> None:
    seeker = "tests.isolation.fixed_seeker:FixedSeeker"
    out = tmp_path / "run"
    assert _run(tmp_path, out, seeker, "--isolate").returncode == 0
    lines = (out / "episodes.jsonl").read_text().splitlines(keepends=True)
    (out / "episodes.jsonl").write_text("".join(lines[:-1]))  # one episode to play again
    done = _run(tmp_path, out, seeker)
    assert done.returncode == 4
    assert "seeker player ran isolated, now in-process" in done.stderr
    assert len((out / "episodes.jsonl").read_text().splitlines()) == len(lines) - 1
    assert _run(tmp_path, out, seeker, "--isolate").returncode == 0
    assert len((out / "episodes.jsonl").read_text().splitlines()) == len(lines)


def test_an_isolated_reply_of_a_union_type_is_read_back(tmp_path: Path) -> None:
    """A player whose ``respond`` returns ``int | JsonReply`` (the toy's guesser on a model):
    the sandbox's unreadable reply comes back as the JsonReply it was, so the episode ends on
    the player's format violation -- before, it came back a dict and the episode was recorded as
    an infrastructure error."""
    out = tmp_path / "toy"
    full = {**os.environ, "PYTHONPATH": str(ROOT), "TODEVAL_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "todeval", "run", "toy", "--guesser"]
    cmd += ["tests.isolation.mumbling_guesser:MumblingGuesser", "--limit", "2", "--isolate"]
    cmd += ["--out", str(out), "--quiet"]
    done = subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert {r["outcome"] for r in records} == {"aborted"}, [r.get("reason") for r in records]
    assert all("no JSON object" in str(r.get("reason")) for r in records)
    assert _channel_of(out, "guesser") == "isolated"
