"""``--user human``: a person plays the booking user in a real terminal (tmux send-keys)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.testing.tmux import Tmux

ROOT = Path(__file__).resolve().parents[2]
HUMAN_LINES = [
    "I am looking for a hotel called city centre north b and b.",
    "For 1 person, 5 nights from friday, please.",
    "done",
]


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
        tmux.type("")  # an empty Enter is asked for again, not sent (nor the end)
        tmux.wait_for(r"type a message and press Enter; /quit gives up\)\n.*you> ")
        for line in HUMAN_LINES[:-1]:
            tmux.type(line)
            tmux.wait_for(r"^system: .*\n(.*\n)*you> ")
        tmux.type("done")
        screen = tmux.wait_for(r"EXIT=\d+")
    assert "EXIT=0" in screen, screen
    assert "=== dialogue ended: success (user said done" in screen  # the outcome is shown
    assert "in flight" not in screen  # interactive: no progress line over the dialogue
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    said = [e["data"]["text"] for e in record["events"] if e["kind"] == "user_message"]
    assert said == HUMAN_LINES
    assert record["reason"].startswith("user said done")
    assert record["details"]["bookings"]["hotel"]["reference"]  # the person booked
    assert json.loads((out / "manifest.json").read_text())["config"]["user"] == "human"
    # the recorded person, replayed against the deterministic rule system: the same bookings
    replay = tmp_path / "replay"
    argv = ["run", "booking", "--user", "replay", "--transcripts", str(out),
            "--task-ids", "test/000-sng01936", "--quiet", "--out", str(replay)]  # fmt: skip
    assert main(argv) == 0
    (again,) = (replay / "episodes.jsonl").read_text().splitlines()
    replayed = json.loads(again)
    assert replayed["details"]["bookings"] == record["details"]["bookings"]
    assert replayed["metrics"] == record["metrics"]
    assert [e["data"]["text"] for e in replayed["events"] if e["kind"] == "user_message"] == said


def test_quit_gives_up_and_an_empty_line_is_asked_again() -> None:
    import asyncio
    import io

    from todeval.dialogue.human import HumanQuit, TerminalParticipant

    out = io.StringIO()
    person = TerminalParticipant(name="you", other="Jax", stdin=io.StringIO("\n  \nhi\n/quit\n"))
    person._out = out
    assert asyncio.run(person.respond("hello")) == "hi"
    with pytest.raises(HumanQuit, match="/quit"):
        asyncio.run(person.respond("and?"))
    assert out.getvalue().count("/quit gives up") == 2  # once per empty line
    with pytest.raises(HumanQuit, match="closed"):
        asyncio.run(person.respond("still there?"))  # end of input


def test_replay_needs_a_recording_and_refuses_missing_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["run", "booking", "--quiet", "--task-ids", "test/000-sng01936"]
    assert main([*base, "--user", "replay", "--out", str(tmp_path / "a")]) == 2
    assert "--transcripts RUN_DIR" in capsys.readouterr().err
    assert main([*base, "--transcripts", str(tmp_path), "--out", str(tmp_path / "b")]) == 2
    recorded = tmp_path / "rec"
    assert main([*base, "--out", str(recorded)]) == 0
    other = ["run", "booking", "--quiet", "--task-ids", "test/001-sng0792", "--user", "replay"]
    assert main([*other, "--transcripts", str(recorded), "--out", str(tmp_path / "c")]) == 0
    (line,) = (tmp_path / "c" / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["outcome"] == "user_simulator_error"
    assert "the recording has no episode test/001-sng0792#0" in record["reason"]
