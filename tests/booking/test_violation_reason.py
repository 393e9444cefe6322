"""A format violation of a built-in system says what the system was expected to send (issue 44):
the aborted episode's reason and the run's note after it, under both protocols."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main

PLAIN_TEXT = {"default": "Hello! How can I help you?"}  # an agent's reply script: no followup
BAD_BOOKING = {
    "default": {"tool_calls": [{"name": "validatehotelbooking", "arguments": {"people": "2"}}]}
}


def aborted_reason(tmp_path: Path, script: dict[str, object], *args: str) -> tuple[str, str]:
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    out = tmp_path / "run"
    argv = ["run", "booking", "--system", "monolithic", "--system-model",
            f"scripted:{tmp_path / 'script.json'}", "--task-ids", "sng01936",
            "--out", str(out), *args]  # fmt: skip
    assert main(argv) == 0
    (line,) = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert record["outcome"] == "aborted"
    return record["reason"], record["events"][-1]["data"]["reason"]


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_plain_text_says_to_wrap_it_in_followup(
    tmp_path: Path, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    reason, ended = aborted_reason(tmp_path, PLAIN_TEXT, "--protocol", protocol)
    assert reason == ended
    assert reason.startswith("format violation: no tool call; expected one tool call per output")
    assert 'followup {"message": TEXT} to speak to the user' in reason
    assert "retrievefromhoteldb" in reason and "validatetrainbooking" in reason
    assert reason.endswith('the system sent text "Hello! How can I help you?"')
    err = capsys.readouterr().err
    assert f"note: 1 episode aborted; the first, test/000-sng01936#0: {reason}\n" in err


def test_a_bad_call_shows_the_tools_arguments(tmp_path: Path) -> None:
    reason, _ = aborted_reason(tmp_path, BAD_BOOKING, "--protocol", "strict", "--quiet")
    head, expected = reason.split("; ", 1)
    assert head == "format violation: schema violation at arguments: 'area' is a required property"
    assert expected.startswith("expected validatehotelbooking with a JSON object of {area*, ")
    assert "people*, day*, stay*, phone, postcode, address} (* required)" in expected


def test_the_violation_event_keeps_its_reason(tmp_path: Path) -> None:
    """Only the episode's end says what was expected: the violation event (the taxonomy's and
    the review's input) is unchanged."""
    _, _ = aborted_reason(tmp_path, PLAIN_TEXT, "--quiet")
    record = json.loads((tmp_path / "run" / "episodes.jsonl").read_text(encoding="utf-8"))
    violation = next(e for e in record["events"] if e["kind"] == "violation")
    assert violation["data"] == {"reason": "no tool call", "raw": "Hello! How can I help you?"}
    assert record["labels"]["failure_class"] == "format_violation:no_tool_call"
