"""Simulator panels through the CLI: several users (and systems), spread and rank stability."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.core.records import Summary
from todeval.errors import UsageError
from todeval.panels.members import parse_members
from todeval.panels.summary import summarize_panel
from todeval.results.profile import PanelRoles

ROOT = Path(__file__).resolve().parents[2]
ORACLE = "tests.booking.scripted:OracleSystem"


def test_parse_members() -> None:
    members = parse_members("agenda,corpus,llm=openai:llama3:8b@http://127.0.0.1:1/v1")
    assert [m.player for m in members] == ["agenda", "corpus", "llm"]
    assert members[2].model == "openai:llama3:8b@http://127.0.0.1:1/v1"
    assert members[2].name == "llm-openai_llama3_8b"
    with pytest.raises(UsageError):
        parse_members("agenda,agenda")


def test_panel_one_system_three_users(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(ROOT))
    out = tmp_path / "panel"
    code = main(
        [
            "run",
            "booking",
            "--users",
            f"agenda,corpus,{ORACLE.replace('System', 'User')}",
            "--limit",
            "10",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    panel = json.loads((out / "panel.json").read_text())
    assert panel["schema_version"] == 2 and (panel["subject"], panel["varied"]) == (
        "system",
        "user",
    )
    users = panel["members"]["user"]
    assert users == ["agenda", "corpus", "tests.booking.scripted:OracleUser"]
    spread = panel["spread"]["rule"]
    values = [spread["per_member"][u]["value"] for u in users]
    assert spread["spread_max_min"] == pytest.approx(max(values) - min(values))
    assert spread["std_sample"] == pytest.approx(statistics.stdev(values))
    assert panel["rank_stability"] is None
    for rel in panel["runs"].values():
        assert (out / rel / "summary.json").exists()
    text = capsys.readouterr().out
    assert "max - min (paper)" in text
    faults = panel["simulator_faults"]  # todeval review's reading per user simulator
    assert set(faults) == set(users) and faults["agenda"]["with_fault"] == 0
    assert all(f["episodes"] == 10 for f in faults.values())
    assert "agenda: simulator faults in 0 of 10 episodes" in text


def test_panel_two_systems_rank_stability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(ROOT))
    out = tmp_path / "panel"
    code = main(
        [
            "run",
            "booking",
            "--systems",
            f"rule,{ORACLE}",
            "--users",
            "agenda,corpus",
            "--limit",
            "10",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    panel = json.loads((out / "panel.json").read_text())
    rs = panel["rank_stability"]
    assert set(rs["rankings"]) == {"agenda", "corpus"}
    systems = panel["members"]["system"]
    assert all(sorted(r) == sorted(systems) for r in rs["rankings"].values())
    assert "agenda|corpus" in rs["kendall_tau"]
    assert rs["top_changes"] == (len(set(rs["top"].values())) > 1)
    assert "Kendall tau-b" in capsys.readouterr().out


def test_panel_refuses_corpus_user_on_synthetic(tmp_path: Path) -> None:
    code = main(
        [
            "run",
            "booking",
            "--tasks",
            "synthetic",
            "--users",
            "agenda,corpus",
            "--out",
            str(tmp_path / "p"),
            "--quiet",
        ]
    )
    assert code == 2
    assert not (tmp_path / "p").exists()


def _summary(value: float) -> Summary:
    from todeval.core.records import Estimate, MetricSummary

    est = Estimate(value=value, ci_low=value, ci_high=value, n=10)
    return Summary(
        benchmark="booking",
        n_episodes=10,
        outcomes={},
        metrics={"booking.booking_accuracy": MetricSummary(micro=est)},
    )


ROLES = PanelRoles(subject="system", varied="user")
METRIC = "booking.booking_accuracy"


def test_ties_do_not_count_as_a_change_of_top_system() -> None:
    scores = {
        ("a", "u1"): 0.9,
        ("b", "u1"): 0.5,
        ("a", "u2"): 0.8,
        ("b", "u2"): 0.6,
        ("a", "u3"): 0.0,
        ("b", "u3"): 0.0,
    }
    panel = summarize_panel(
        {k: _summary(v) for k, v in scores.items()},
        ["a", "b"],
        ["u1", "u2", "u3"],
        {},
        METRIC,
        roles=ROLES,
    )
    rs = panel.rank_stability
    assert rs is not None
    assert rs.ranking_text["u3"] == "a = b" and rs.top["u3"] == "a = b"
    assert rs.kendall_tau["u1|u2"] == 1.0 and rs.kendall_tau["u1|u3"] is None
    assert rs.top_changes is False
    flipped = {**scores, ("b", "u2"): 0.95}
    panel2 = summarize_panel(
        {k: _summary(v) for k, v in flipped.items()},
        ["a", "b"],
        ["u1", "u2", "u3"],
        {},
        METRIC,
        roles=ROLES,
    )
    assert panel2.rank_stability is not None and panel2.rank_stability.top_changes is True
    assert panel2.rank_stability.kendall_tau["u1|u2"] == -1.0
    assert panel.spread["a"].spread_max_min == 0.9


def test_panel_files_old_and_new_table_names(tmp_path: Path) -> None:
    """``--users-file`` with 0.1.0's ``[[users]]``/``[[systems]]`` and ``--panel`` with
    ``[[user]]``/``[[system]]`` give the same panel."""
    old = tmp_path / "old.toml"
    old.write_text(
        '[[users]]\nname = "agenda"\nplayer = "agenda"\n\n[[users]]\nname = "replay"\n'
        'player = "corpus"\n\n[[systems]]\nname = "rule"\nplayer = "rule"\n',
        encoding="utf-8",
    )
    new = tmp_path / "new.toml"
    new.write_text(
        old.read_text(encoding="utf-8")
        .replace("[[users]]", "[[user]]")
        .replace("systems", "system"),
        encoding="utf-8",
    )
    panels = []
    for flag, path in (("--users-file", old), ("--panel", new)):
        out = tmp_path / path.stem
        args = ["run", "booking", flag, str(path), "--limit", "3", "--out", str(out), "--quiet"]
        assert main(args) == 0
        panels.append(json.loads((out / "panel.json").read_text()))
    assert panels[0]["members"] == {"system": ["rule"], "user": ["agenda", "replay"]}
    assert panels[0]["runs"] == {"rule|agenda": "rule__agenda", "rule|replay": "rule__replay"}
    assert panels[0]["spread"] == panels[1]["spread"]


def test_a_bad_panel_file_is_exit_3_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "panel.toml"
    path.write_text('[[users]]\nname = "a"\nplayer = "agenda"\n[[hosts]]\n', encoding="utf-8")
    code = main(["run", "booking", "--users-file", str(path), "--out", str(tmp_path / "p")])
    assert code == 3
    assert (
        "unknown table [[hosts]]; a panel file has [[system]], [[user]]" in capsys.readouterr().err
    )
    assert not (tmp_path / "p").exists()
