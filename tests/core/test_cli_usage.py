"""The command line's usage errors: no abbreviated options, and a hint for an unknown flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli import main as _main


def main(argv: list[str]) -> int:
    """The exit code, whether the parser exits (usage errors) or main returns."""
    try:
        return _main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_an_abbreviation_is_not_taken_for_a_longer_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse would read --model as --models-file; todeval refuses and names the role flags
    assert main(["run", "booking", "--model", "openai:gpt-4o-mini"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "unrecognized arguments: --model openai:gpt-4o-mini" in err
    assert "--system-model" in err and "--user-model" in err


def test_an_unknown_flag_without_a_near_option_has_no_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "booking", "--xyzzy", "rule"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("unrecognized arguments: --xyzzy rule")


def test_a_near_miss_flag_gets_the_close_option(capsys: pytest.CaptureFixture[str]) -> None:
    """A truncated or misspelt flag names the option it is closest to (issue 44.4)."""
    assert main(["run", "booking", "--sys", "rule"]) == 2
    assert "did you mean --system" in capsys.readouterr().err
    assert main(["compare", "a", "--metric", "x"]) == 2
    assert "did you mean --metrics?" in capsys.readouterr().err


def test_a_broken_plugin_is_one_warning_line_and_the_rest_works(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib.metadata import EntryPoint, entry_points

    real = list(entry_points(group="todeval.plugins"))
    broken = EntryPoint(name="broken", value="todeval_no_such_plugin_xyz", group="todeval.plugins")
    monkeypatch.setattr(
        "todeval.registry.entry_points",
        lambda group: [*real, broken] if group == "todeval.plugins" else entry_points(group=group),
    )
    assert main(["--version"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("todeval ")
    (warning,) = captured.err.strip().splitlines()
    assert warning.startswith("todeval: warning: plug-in 'broken' (todeval_no_such_plugin_xyz)")
    assert "ModuleNotFoundError" in warning and "Traceback" not in captured.err
    assert main(["validate", "toy", "--list"]) == 0  # the other plug-ins still work


def test_an_unreachable_model_outside_a_run_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from todeval.testing.server_process import unused_port

    url = f"http://127.0.0.1:{unused_port()}/v1"
    argv = ["data", "bargain-factory", "--model", f"openai:m@{url}", "-o", str(tmp_path / "f.json")]
    assert main([*argv, "--limit", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("todeval: error: model call failed") and url in line
    assert line.endswith("check the URL and that the server is running")
