"""Reading episodes.jsonl in two passes, validating each line once: the first pass reads only
each line's key (:func:`line_key`, from the head todeval writes, else by parsing), the second
validates; the last line per key wins, a torn last line is skipped, a whole unterminated last
line counts, and a line whose key the head misstates is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Timing
from todeval.errors import BadInputError
from todeval.runner.store import RunDirectory, line_key


def _line(task: str, trial: int = 0, **extra: Any) -> bytes:
    record = EpisodeRecord(
        benchmark="toy",
        episode_id=f"{task}#{trial}",
        task_id=task,
        trial=trial,
        seed=1,
        outcome=Outcome.SUCCESS,
        timing=Timing(started_at="t0", ended_at="t1", duration_s=0.0),
        **extra,
    )
    return record.model_dump_json().encode("utf-8") + b"\n"


def _read(tmp_path: Path, data: bytes) -> list[tuple[str, int, str]]:
    (tmp_path / "episodes.jsonl").write_bytes(data)
    return [(r.task_id, r.trial, r.reason) for r in RunDirectory(tmp_path).iter_episodes()]


@pytest.mark.parametrize(
    "task", ["a", 'quote"d', "back\\slash", "ünïcode", "tab\there", "\u2028", "x" * 300]
)
def test_the_key_read_from_the_head_is_the_parsed_one(task: str) -> None:
    line = _line(task, 3)
    assert line_key(line) == (task, 3)
    spaced = json.dumps(json.loads(line)).encode() + b"\n"  # another writer's layout: parsed
    assert line_key(spaced) == (task, 3)
    assert line_key(b'{"task_id": 5}\n') is None


def test_last_line_per_key_wins_and_tails(tmp_path: Path) -> None:
    first, again = _line("a", reason="first"), _line("a", reason="again")
    data = first + _line("b") + b"\n" + again
    assert _read(tmp_path, data) == [("b", 0, ""), ("a", 0, "again")]
    torn = data + _line("b", reason="torn")[:-40]  # cut mid-write: skipped, b stays
    assert _read(tmp_path, torn) == [("b", 0, ""), ("a", 0, "again")]
    whole = data + _line("b", reason="whole")[:-1]  # complete but no newline: it counts
    assert _read(tmp_path, whole) == [("a", 0, "again"), ("b", 0, "whole")]


def test_a_line_whose_head_misstates_its_key_is_refused(tmp_path: Path) -> None:
    head = _line("a")[:-2] + b',"task_id":"b"}\n'  # JSON's last duplicate wins: task b
    with pytest.raises(BadInputError, match="line 1 names its task_id or trial twice"):
        _read(tmp_path, head)
    with pytest.raises(BadInputError, match="line 2 is not a valid episode record"):
        _read(tmp_path, _line("a") + b'{"task_id":"x","trial":0}\n')
