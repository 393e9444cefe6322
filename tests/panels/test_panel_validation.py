"""The whole panel is validated before any member runs (issue 16, finding 9): two members of
one name, names that collide once slugged (or differ only in letter case), pairs that would
share a run directory -- one line, exit 3 for a panel file (2 for the command line), and no
run directory written."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli import main

# every benchmark with panels, the role its panel file varies, and two valid players of it
PANELS = {
    "booking": (["run", "booking"], "user", ("agenda", "corpus")),
    "clarq": (["run", "clarq", "--seeker", "oracle"], "provider", ("rule", "rule")),
    "toy": (["run", "toy"], "host", ("rule", "vague")),
}


def _table(role: str, name: str, player: str) -> str:
    return f'[[{role}]]\nname = "{name}"\nplayer = "{player}"\n'


def _run_panel(
    bench: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    panel = tmp_path / "panel.toml"
    panel.write_text(text)
    argv, _, _ = PANELS[bench]
    out = tmp_path / "out"
    capsys.readouterr()
    code = main([*argv, "--panel", str(panel), "--limit", "1", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert not out.exists()  # refused before the first member ran
    return code, lines[0]


@pytest.mark.parametrize("bench", sorted(PANELS))
def test_two_members_of_one_name_are_refused_before_anything_runs(
    bench: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, role, (first, second) = PANELS[bench]
    text = _table(role, "same", first) + _table(role, "same", second)
    code, line = _run_panel(bench, text, tmp_path, capsys)
    assert code == 3
    assert line.endswith(f"{role} names must be distinct: 'same' twice")


@pytest.mark.parametrize("bench", sorted(PANELS))
@pytest.mark.parametrize(
    ("a", "b", "on_disk"), [("a b", "a_b", "a_b"), ("x/y", "y", "y"), ("Alpha", "alpha", "alpha")]
)
def test_names_sharing_a_directory_are_refused_before_anything_runs(
    bench: str, a: str, b: str, on_disk: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, role, (first, second) = PANELS[bench]
    code, line = _run_panel(
        bench, _table(role, a, first) + _table(role, b, second), tmp_path, capsys
    )
    assert code == 3
    assert f"names must be distinct: {b!r} and {a!r} (both {on_disk!r} on disk)" in line


def test_pairs_sharing_a_directory_are_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        _table("guesser", "a__b", "bisect")
        + _table("guesser", "a", "random")
        + _table("host", "c", "rule")
        + _table("host", "b__c", "vague")
    )
    code, line = _run_panel("toy", text, tmp_path, capsys)
    assert code == 2
    assert "panel pairs 'a__b|c' and 'a|b__c' would share the run directory 'a__b__c'" in line


def test_a_duplicate_on_the_command_line_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["run", "toy", "--hosts", "rule,vague,rule", "--limit", "1", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 2
    assert "host names must be distinct: 'rule' twice" in capsys.readouterr().err
    assert not out.exists()


def test_a_panel_file_nested_thousands_deep_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = '[[user]]\nname = "a"\nplayer = ' + "[" * 3000 + "]" * 3000 + "\n"
    code, line = _run_panel("booking", text, tmp_path, capsys)
    assert code == 3 and "nested too deep" in line
