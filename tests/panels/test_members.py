"""Panel members from ``--<role>s`` lists and TOML panel files, validated before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.errors import BadInputError, UsageError
from todeval.panels.members import Member, load_panel_file, parse_members

ROLES = ["guesser", "host"]


def test_parse_members_names_and_models() -> None:
    members = parse_members("rule, vague,llm=openai:qwen:7b@http://127.0.0.1:1/v1", "host")
    assert [m.name for m in members] == ["rule", "vague", "llm-openai_qwen_7b"]
    assert members[2].model == "openai:qwen:7b@http://127.0.0.1:1/v1"
    for bad, message in [
        ("rule,rule", "host names must be distinct: 'rule' twice"),
        ("a b,a_b", "both 'a_b' on disk"),
        ("a|b", "may not contain '|'"),
        (",", "no host in the panel"),
        ("=spec", "names no player"),
    ]:
        with pytest.raises(UsageError, match=message):
            parse_members(bad, "host")


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "panel.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_panel_file_tables_per_role_and_plural_aliases(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """
[[host]]
name = "strict"
player = "rule"

[[hosts]]
player = "vague"
""",
    )
    with pytest.raises(BadInputError, match=r"both \[\[host\]\] and \[\[hosts\]\]"):
        load_panel_file(path, ROLES)
    path = _file(
        tmp_path,
        """
[[hosts]]
player = "vague"

[[guesser]]
name = "small"
player = "llm"
model = "scripted:/tmp/replies.json"
""",
    )
    members = load_panel_file(path, ROLES)
    assert members["host"] == [Member(name="vague", player="vague")]
    assert members["guesser"] == [
        Member(name="small", player="llm", model="scripted:/tmp/replies.json")
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[user]]\nname = "a"\nplayer = "a"\n', r"unknown table \[\[user\]\]; a panel file has"),
        (
            '[[host]]\nname = "a"\nplayer = "rule"\n[[host]]\nname = "a"\nplayer = "vague"\n',
            "twice",
        ),
        (
            '[[host]]\nname = "x y"\nplayer = "rule"\n[[host]]\nname = "x_y"\nplayer = "v"\n',
            "on disk",
        ),
        ('[[host]]\nname = "a"\n', r"invalid panel file at host\.0\.player: Field required"),
        ('[[host]]\nname = "a"\nplayer = "rule"\ncolour = "red"\n', r"host\.0\.colour"),
        ("host = 3\n", "must be an array of tables"),
        ("[[host]\n", "not valid TOML"),
    ],
)
def test_bad_panel_files_are_one_line_exit_3(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(BadInputError, match=message) as exc:
        load_panel_file(_file(tmp_path, text), ROLES)
    assert exc.value.exit_code == 3 and "\n" not in exc.value.message


def test_missing_panel_file(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="cannot read the panel file"):
        load_panel_file(tmp_path / "nope.toml", ROLES)
