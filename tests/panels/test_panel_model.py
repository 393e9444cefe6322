"""``panel.json``: the schema-2 model, and a real schema-1 file of 0.1.0 read through it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from todeval.core.records import Estimate, MetricSummary, Summary
from todeval.errors import BadInputError
from todeval.panels.model import (
    PANEL_SCHEMA_VERSION,
    PanelSummary,
    is_panel_data,
    read_panel,
    write_panel,
)
from todeval.panels.summary import summarize_panel
from todeval.results.profile import PanelRoles

V1 = Path(__file__).resolve().parents[1] / "fixtures" / "panel_v1" / "panel.json"
ORACLE_SYSTEM = "tests.booking.scripted:OracleSystem"
ORACLE_USER = "tests.booking.scripted:OracleUser"


def test_a_schema_1_file_of_0_1_0_is_read_and_migrated() -> None:
    raw = json.loads(V1.read_text(encoding="utf-8"))
    assert raw["schema_version"] == 1 and "systems" in raw  # the fixture is the old format
    panel = read_panel(V1)
    assert panel.schema_version == PANEL_SCHEMA_VERSION
    assert (panel.benchmark, panel.metric) == ("booking", "booking.booking_accuracy")
    assert (panel.subject, panel.varied) == ("system", "user")
    assert panel.subjects == ["rule", ORACLE_SYSTEM]
    assert panel.varied_members == ["agenda", "corpus", ORACLE_USER]
    assert panel.runs["rule|corpus"] == "rule__corpus"
    rule = panel.spread["rule"]
    assert rule.per_member["corpus"].value == pytest.approx(0.9)
    assert rule.per_member["corpus"].n == 10
    assert rule.spread_max_min == pytest.approx(1.0)
    assert rule.std_sample == pytest.approx(0.5507570547286102)
    assert (rule.best, rule.worst) == ("agenda", ORACLE_USER)
    rs = panel.rank_stability
    assert rs is not None and rs.top_changes is True
    assert rs.top[ORACLE_USER] == ORACLE_SYSTEM
    assert rs.kendall_tau["agenda|corpus"] == 1.0
    assert rs.kendall_tau[f"agenda|{ORACLE_USER}"] == -1.0
    assert rs.text("agenda") == f"rule > {ORACLE_SYSTEM}"
    # written back, it is a schema-2 file that reads the same
    again = PanelSummary.model_validate_json(panel.model_dump_json())
    assert again == panel


def test_schema_1_without_benchmark_takes_the_metric_namespace() -> None:
    raw = json.loads(V1.read_text(encoding="utf-8"))
    del raw["benchmark"]
    assert PanelSummary.model_validate(raw).benchmark == "booking"
    del raw["metric"]
    with pytest.raises(ValueError, match="needs 'metric'"):
        PanelSummary.model_validate(raw)


def test_is_panel_data_knows_both_schemas() -> None:
    raw = json.loads(V1.read_text(encoding="utf-8"))
    assert is_panel_data(raw)
    assert is_panel_data(json.loads(read_panel(V1).model_dump_json()))
    assert not is_panel_data({"benchmark": "x", "metrics": {}})


def test_bad_and_newer_files_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "panel.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(BadInputError, match="not valid JSON"):
        read_panel(path)
    path.write_text(json.dumps({"schema_version": 9, "runs": {}}), encoding="utf-8")
    with pytest.raises(BadInputError, match="newer than this todeval reads") as exc:
        read_panel(path)
    assert "\n" not in exc.value.message
    path.write_text(json.dumps({"schema_version": 2, "runs": {}}), encoding="utf-8")
    with pytest.raises(BadInputError, match="not a valid panel file"):
        read_panel(path)


def _summary(value: float | None, benchmark: str = "toy") -> Summary:
    est = Estimate(value=value, ci_low=value, ci_high=value, n=10)
    return Summary(
        benchmark=benchmark,
        n_episodes=10,
        outcomes={},
        metrics={"toy.success": MetricSummary(micro=est)},
    )


def test_summarize_and_write_atomically(tmp_path: Path) -> None:
    roles = PanelRoles(subject="guesser", varied="host")
    scores = {("a", "h1"): 0.9, ("a", "h2"): 0.3, ("b", "h1"): 0.5, ("b", "h2"): 0.6}
    panel = summarize_panel(
        {k: _summary(v) for k, v in scores.items()},
        ["a", "b"],
        ["h1", "h2"],
        {"a|h1": "a__h1"},
        "toy.success",
        roles=roles,
    )
    assert panel.benchmark == "toy" and panel.members == {
        "guesser": ["a", "b"],
        "host": ["h1", "h2"],
    }
    assert panel.spread["a"].spread_max_min == pytest.approx(0.6)
    assert panel.spread["a"].std_sample == pytest.approx(0.4242640687)
    assert (panel.spread["b"].best, panel.spread["b"].worst) == ("h2", "h1")
    rs = panel.rank_stability
    assert rs is not None
    assert rs.rankings == {"h1": ["a", "b"], "h2": ["b", "a"]}
    assert rs.kendall_tau == {"h1|h2": -1.0} and rs.top_changes is True
    path = write_panel(tmp_path / "out", panel)
    assert not list((tmp_path / "out").glob("*.tmp"))
    assert read_panel(path) == panel
    # one subject: no rank stability; a pair without the metric is left out of the spread
    one = summarize_panel(
        {("a", "h1"): _summary(0.5), ("a", "h2"): _summary(None)},
        ["a"],
        ["h1", "h2"],
        {},
        "toy.success",
        roles=roles,
    )
    assert one.rank_stability is None
    assert one.spread["a"].spread_max_min == 0.0 and one.spread["a"].std_sample is None


def test_a_copied_v1_panel_directory_loads_in_the_report(tmp_path: Path) -> None:
    from todeval.report import load_inputs

    shutil.copy(V1, tmp_path / "panel.json")
    inputs = load_inputs([tmp_path])
    [item] = inputs.panels
    assert item.panel.subject == "system" and len(item.missing) == 6  # runs not kept


def test_a_lower_is_better_metric_ranks_ascending() -> None:
    roles = PanelRoles(subject="guesser", varied="host")
    scores = {("a", "h1"): 0.9, ("a", "h2"): 0.3, ("b", "h1"): 0.5, ("b", "h2"): 0.6}
    panel = summarize_panel(
        {k: _summary(v) for k, v in scores.items()},
        ["a", "b"],
        ["h1", "h2"],
        {},
        "toy.success",
        roles=roles,
        lower_is_better=True,
    )
    assert (panel.spread["a"].best, panel.spread["a"].worst) == ("h2", "h1")
    assert panel.spread["a"].spread_max_min == pytest.approx(0.6)
    rs = panel.rank_stability
    assert rs is not None
    assert rs.rankings == {"h1": ["b", "a"], "h2": ["a", "b"]}
    assert rs.top == {"h1": "b", "h2": "a"}
    assert rs.kendall_tau == {"h1|h2": -1.0}
    # a subject without a value ranks last either way
    gap = summarize_panel(
        {("a", "h1"): _summary(0.9), ("b", "h1"): _summary(None)},
        ["a", "b"],
        ["h1"],
        {},
        "toy.success",
        roles=roles,
        lower_is_better=True,
    )
    assert gap.rank_stability is not None and gap.rank_stability.rankings == {"h1": ["a", "b"]}
