"""``todeval power`` on a pilot too small to estimate a variance from: one line, exit 3 (it was
an internal error, exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli import main


def test_a_one_task_pilot_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "one"
    assert main(["run", "toy", "--limit", "1", "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["power", str(run)]) == 3
    err = capsys.readouterr().err
    assert "a pilot needs at least two tasks" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
