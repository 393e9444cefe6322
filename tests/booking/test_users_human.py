"""``--user human``: a person plays the booking user in a real terminal (tmux send-keys)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from todeval.testing.tmux import Tmux

ROOT = Path(__file__).resolve().parents[2]


def test_a_person_plays_the_user_in_the_terminal(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is missing but CI=true requires it")
        pytest.skip("tmux not available")
    out = tmp_path / "human"
    command = [sys.executable, "-m", "todeval.cli", "run", "booking", "--user", "human"]
    command += ["--task-ids", "test/000-sng01936", "--out", str(out)]
    shell = f"cd {shlex.quote(str(ROOT))} && {shlex.join(command)}; echo EXIT=$?; sleep 30"
    with Tmux(f"todeval-booking-{os.getpid()}") as tmux:
        tmux.start(shell)
        screen = tmux.wait_for(r"^you> ")
        assert "Your goal (test/000" in screen  # the goal is shown to the person
        tmux.type("I am looking for a hotel called city centre north b and b.")
        tmux.wait_for(r"^system: .*\n(.*\n)*you> ")
        tmux.type("done")
        screen = tmux.wait_for(r"EXIT=\d+")
    assert "EXIT=0" in screen, screen
    assert "in flight" not in screen  # interactive: no progress line over the dialogue
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    said = [e["data"]["text"] for e in record["events"] if e["kind"] == "user_message"]
    assert said == ["I am looking for a hotel called city centre north b and b.", "done"]
    assert record["reason"].startswith("user said done")
    assert json.loads((out / "manifest.json").read_text())["config"]["user"] == "human"
