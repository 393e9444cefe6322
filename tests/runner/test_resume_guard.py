"""The resume guard cannot be dodged (issue 16, finding 2): a run directory is continued only
when every episode in it is one this run could have written. Refused with exit 4 and one line
naming the problem; the directory is left exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main

# the first 4 test tasks, whatever the seed (a stratified draw would depend on the seed)
RUN = ["run", "booking", "--limit", "4", "--limit-mode", "first", "--quiet"]


def _run(out: Path, seed: int) -> int:
    return main([*RUN, "--seed", str(seed), "--out", str(out)])


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def _refused(out: Path, seed: int, capsys: pytest.CaptureFixture[str]) -> str:
    before = _snapshot(out)
    capsys.readouterr()
    assert _run(out, seed) == 4
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert _snapshot(out) == before  # nothing rewritten, nothing appended
    return lines[0]


def _lines(out: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


def _write_lines(out: Path, lines: list[dict[str, object]]) -> None:
    text = "".join(json.dumps(x) + "\n" for x in lines)
    (out / "episodes.jsonl").write_text(text)


def test_episodes_without_a_manifest_are_not_continued(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(out, 8) == 0
    (out / "manifest.json").unlink()
    line = _refused(out, 7, capsys)
    assert line.startswith(f"todeval: error: {out} holds episodes.jsonl but no manifest.json")
    assert line.endswith("use another --out directory")
    # the seed it was run with is refused as well: nothing tells the two apart
    _refused(out, 8, capsys)


def test_an_episode_of_another_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seven, eight = tmp_path / "seven", tmp_path / "eight"
    assert _run(seven, 7) == 0 and _run(eight, 8) == 0
    lines = _lines(seven)
    foreign = _lines(eight)[0]
    assert foreign["task_id"] == lines[0]["task_id"]  # same task and trial, another run
    _write_lines(seven, [foreign, *lines[1:]])
    (seven / "summary.json").unlink()  # so the run is not "already complete"
    line = _refused(seven, 7, capsys)
    assert "episodes.jsonl line 1" in line and str(foreign["episode_id"]) in line
    assert "was played by another run" in line


def test_a_foreign_task_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _run(out, 7) == 0
    lines = _lines(out)
    lines[2] = {**lines[2], "task_id": "test/999-nowhere", "episode_id": "test/999-nowhere#0"}
    _write_lines(out, lines)
    line = _refused(out, 7, capsys)
    assert "line 3 (test/999-nowhere#0) is not part of this run" in line


def test_another_trial_is_a_foreign_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(out, 7) == 0
    lines = _lines(out)
    extra = {**lines[0], "trial": 3, "episode_id": f"{lines[0]['task_id']}#3"}
    _write_lines(out, [*lines, extra])
    line = _refused(out, 7, capsys)
    assert "line 5" in line and "trial 3 is not in its selection" in line


def test_a_newer_schema_version_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(out, 7) == 0
    lines = _lines(out)
    lines[1] = {**lines[1], "schema_version": 99}
    _write_lines(out, lines)
    line = _refused(out, 7, capsys)
    assert "line 2" in line and "schema_version 99, newer than this todeval writes" in line


def test_an_episode_of_another_benchmark_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(out, 7) == 0
    lines = _lines(out)
    lines[0] = {**lines[0], "benchmark": "toy"}
    _write_lines(out, lines)
    assert "is an episode of 'toy', not 'booking'" in _refused(out, 7, capsys)


def test_a_genuine_partial_run_still_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(out, 7) == 0
    lines = _lines(out)
    _write_lines(out, lines[:2])  # as if killed after two episodes
    (out / "summary.json").unlink()
    assert _run(out, 7) == 0
    assert _lines(out)[:2] == lines[:2] and len(_lines(out)) == 4
