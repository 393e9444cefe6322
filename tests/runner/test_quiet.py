"""``--quiet`` means one thing for every command that has it: nothing but warnings and errors
(issue 27). Runs, panels and ``validate`` print nothing on stdout or stderr when all is well;
the results are in the run directory or the ``-o`` file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main

RUNS = {
    "booking": ["run", "booking", "--limit", "3"],
    "booking-control": ["run", "booking", "--system", "oracle", "--limit", "2"],
    "clarq": ["run", "clarq", "--limit", "3"],
    "bargain": ["run", "bargain", "--labeller", "keyword", "--limit", "3"],
    "toy": ["run", "toy", "--limit", "3"],
    "booking-panel": ["run", "booking", "--users", "agenda,corpus", "--limit", "2"],
    "toy-panel": ["run", "toy", "--hosts", "rule,vague", "--limit", "2"],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_quiet_run_prints_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*RUNS[name], "--out", str(tmp_path / "run"), "--quiet"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (out, err) == ("", "")
    # the same run again (complete): still nothing
    assert main(argv) == 0
    assert capsys.readouterr() == ("", "")
    written = list((tmp_path / "run").rglob("summary.json"))
    assert written, "the results are in the run directory"


def test_without_quiet_the_same_run_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*RUNS["booking-control"], "--out", str(tmp_path / "run")]) == 0
    out, err = capsys.readouterr()
    assert "booking.booking_accuracy" in out and "privileged" in err


def test_quiet_validate_prints_nothing_and_names_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "v.json"
    assert main(["validate", "toy", "--quiet", "-o", str(report)]) == 0
    assert capsys.readouterr() == ("", "")
    assert json.loads(report.read_text())["passed"] is True
