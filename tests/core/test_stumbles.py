"""A user's second hour: typos and first mistakes get a line that says what to do (issue 44,
point 4)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from todeval.cli import main


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_a_mistyped_flag_or_choice_says_what_was_meant(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:  # argparse's usage errors exit from the parser
        main(["run", "booking", "--sytem", "rule"])
    assert done.value.code == 2
    assert "did you mean --system" in _err(capsys)
    assert main(["run", "booking", "--system", "rulee", "--limit", "1"]) == 2
    assert "unknown system 'rulee' (did you mean 'rule'?)" in _err(capsys)


def test_a_bare_model_name_gets_the_spec_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "booking", "--system", "monolithic", "--system-model", "gpt-4o"]
    assert main([*argv, "--limit", "1", "--out", str(tmp_path / "r")]) == 2
    assert "did you mean openai:gpt-4o@<url>" in _err(capsys)


def test_a_module_in_this_folder_gets_the_pythonpath_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "__init__.py").write_text("")
    (tmp_path / "mine" / "seeker.py").write_text("class S:\n    pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    argv = ["run", "clarq", "--seeker", "mine.seeker:S", "--limit", "1"]
    assert main([*argv, "--out", str(tmp_path / "r")]) == 2
    assert "run with PYTHONPATH=." in _err(capsys)


def test_report_on_a_folder_of_runs_suggests_the_runs_and_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    assert main(["run", "toy", "--limit", "2", "--out", str(runs / "a"), "--quiet"]) == 0
    shutil.copytree(runs / "a", runs / "b")
    capsys.readouterr()
    assert main(["report", str(runs), "-o", str(tmp_path / "r.html")]) == 3
    err = _err(capsys)
    assert f"it holds 2 run directories: todeval report {runs}/*" in err
    assert f"todeval view {runs}" in err
