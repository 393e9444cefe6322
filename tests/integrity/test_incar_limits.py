"""Finding 14 of issue 16: a response longer than the documented cap (10,000 characters) or an
oversized state is refused with one line (exit 3) instead of being scored for minutes with
gigabytes of memory; a model producing one in ``run incar-turns`` gets a format failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.benchmarks.incar_turns.run import _to_turn
from todeval.cli import main
from todeval.core.records import CallUsage
from todeval.dialogue.reply import JsonReply
from todeval.scoring.incar._predictions import (
    MAX_RESPONSE_CHARS,
    MAX_STATE_CHARS,
    MAX_STATE_SLOTS,
)


def _file(tmp_path: Path, turn: dict[str, Any]) -> Path:
    path = tmp_path / "pred.json"
    path.write_text(json.dumps({"0": [turn]}), encoding="utf-8")
    return path


def test_response_at_the_cap_is_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ("your [value_event] is at [value_time] . " * 300)[:MAX_RESPONSE_CHARS]
    path = _file(tmp_path, {"response": text, "state": {"event": "meeting"}})
    assert main(["score", "incar", str(path), "--resamples", "20"]) == 0


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        ({"response": "x" * (MAX_RESPONSE_CHARS + 1)},
         "dialogue '0' turn 0: 'response' has 10,001 characters; at most 10,000 are accepted"),
        ({"response": "y " * 500_000},
         "dialogue '0' turn 0: 'response' has 1,000,000 characters; at most 10,000 are accepted"),
        ({"response": "ok", "state": {f"s{i}": "v" for i in range(MAX_STATE_SLOTS + 1)}},
         f"dialogue '0' turn 0: 'state' has 33 slots; at most {MAX_STATE_SLOTS} are accepted"),
        ({"response": "ok", "state": {"event": "v" * (MAX_STATE_CHARS + 1)}},
         "dialogue '0' turn 0: state slot 'event': slot names and values have at most 200"),
    ],
)  # fmt: skip
def test_oversized_turn_exits_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], turn: dict[str, Any], expected: str
) -> None:
    path = _file(tmp_path, turn)
    assert main(["score", "incar", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"todeval: error: {path}: {expected}")


def test_too_long_model_reply_is_a_format_failure_of_the_turn() -> None:
    usage = CallUsage(role="system")
    long_reply = JsonReply(value={"response": "z" * (MAX_RESPONSE_CHARS + 1), "state": {}},
                           raw="{...}", usage=usage)  # fmt: skip
    turn = _to_turn(long_reply, None)
    assert turn.response == "" and turn.format_error is not None
    assert "longer than 10,000 characters" in turn.format_error
    ok = JsonReply(value={"response": "fine", "state": {"event": "x"}}, usage=usage)
    assert _to_turn(ok, None).response == "fine"
