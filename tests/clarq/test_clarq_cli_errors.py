"""Malformed transcript files: one line on stderr and exit 3; bad options: exit 2."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.clarq.helpers import REFERENCE, run_cli


def _reference() -> list[list[dict[str, Any]]]:
    data: list[list[dict[str, Any]]] = json.loads(gzip.decompress(REFERENCE.read_bytes()))
    return data


def _bad_file(tmp_path: Path, content: Any) -> Path:
    path = tmp_path / "bad.json"
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")
    return path


def _without(key: str) -> list[list[dict[str, Any]]]:
    data = _reference()
    del data[3][7][key]
    return data


def _flat_l2l() -> list[list[dict[str, Any]]]:
    data = _reference()
    data[0][2]["l2l"] = data[0][2]["l2l"][0]  # one dialogue, not a list of dialogues
    return data


CASES = {
    "not json": ("{not json", "not valid JSON (line 1"),
    "truncated": ('[[{"all_response": "Jax: a"', "not valid JSON"),
    "object at top": ({"results": []}, "expected a list of task types"),
    "types not lists": ([{"all_response": "x"}], "item 0 is a dict, not a list of tasks"),
    "task not object": ([["a string"]], "type 1 task 0: expected a task object, got str"),
    "missing all_response": (_without("all_response"), "type 4 task 7: 'all_response' is missing"),
    "missing l2l": (_without("l2l"), "type 4 task 7: 'l2l' (the dialogues) is missing"),
    "missing purposes": (_without("all_response_exaplain"), "'all_response_exaplain'"),
    "flat l2l": (_flat_l2l(), "type 1 task 2: l2l[0] is not a list of messages"),
    "message not str": ([[{"all_response": "Jax: a\nJax: b", "all_response_exaplain": ["p"],
                           "l2l": [["Jax: hi", 3]]}]], "l2l[0] is not a list of messages"),
    "empty list": ([], "no test tasks"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_file_exits_3_with_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, expected = CASES[case]
    path = _bad_file(tmp_path, content)
    code, stdout, stderr = run_cli(["score", "clarq", str(path)], capsys)
    assert code == 3
    assert stdout == ""
    assert stderr.count("\n") == 1 and stderr.startswith("todeval: error: ")
    assert str(path) in stderr and expected in stderr, stderr
    assert "Traceback" not in stderr


def test_not_gzip_not_utf8_missing_file_and_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b\x08garbage")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00[")
    for path, expected in (
        (broken, "not a UTF-8 (or gzip) JSON file"),
        (binary, "not a UTF-8 (or gzip) JSON file"),
        (tmp_path / "absent.json", "cannot read"),
        (tmp_path, "is a directory"),
    ):
        code, _, stderr = run_cli(["score", "clarq", str(path)], capsys)
        assert code == 3 and expected in stderr and stderr.count("\n") == 1, stderr


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_cli(["score", "clarq", str(REFERENCE), "--resamples", "0"], capsys)
    assert code == 2 and "--resamples" in stderr
    code, _, stderr = run_cli(
        ["score", "clarq", str(REFERENCE), "--models-file", str(tmp_path / "m.yaml")], capsys
    )
    assert code == 2 and "--models-file needs --judge-model" in stderr
    code, _, stderr = run_cli(
        ["score", "clarq", str(REFERENCE), "--offline", "--judge-model", "nonsense"], capsys
    )
    assert code == 2 and "unknown model 'nonsense'" in stderr
    with pytest.raises(SystemExit) as exit_info:  # argparse: no file given
        run_cli(["score", "clarq"], capsys)
    assert exit_info.value.code == 2


def test_unwritable_output_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "missing-dir" / "s.json"
    code, _, stderr = run_cli(
        ["score", "clarq", str(REFERENCE), "-o", str(out), "--resamples", "5"], capsys
    )
    assert code == 3 and "cannot write" in stderr and stderr.count("\n") == 1
