"""``todeval validate``: the generic command over declared control suites (the toy plug-in's
suite and suites built here), its table, JSON, exit codes and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from todeval.cli import main
from todeval.core.records import Estimate, MetricSummary, Summary
from todeval.validation import Control, ControlJob, ControlSuite
from todeval.validation.command import table, validate


def constant_summary(job: ControlJob) -> Summary:
    """A ``score`` control: a summary whose headline is the seed / 10 (and a file it wrote)."""
    (job.workdir / "predictions.json").write_text("{}")
    value = job.seed / 10
    metric = MetricSummary(micro=Estimate(value=value, ci_low=value, ci_high=value, n=3))
    return Summary(benchmark="fake", n_episodes=3, outcomes={}, metrics={"fake.score": metric})


def _score(name: str, low: float, high: float, metric: str = "fake.score") -> Control:
    return Control(
        name=name,
        kind="floor",
        description="a constant",
        metric=metric,
        low=low,
        high=high,
        score=f"{__name__}:constant_summary",
    )


def test_score_controls_are_judged_by_their_band(tmp_path: Path) -> None:
    suite = ControlSuite(
        name="fake",
        controls=(_score("inside", 0.0, 0.5), _score("outside", 0.5, 1.0), _score("no", 0, 1, "x")),
    )
    report = validate(suite, suite.controls, seed=3, workdir=tmp_path)
    by_name = {r.name: r for r in report.results}
    assert by_name["inside"].passed and by_name["inside"].value == pytest.approx(0.3)
    assert not by_name["outside"].passed
    assert not by_name["no"].passed and "no metric 'x'" in (by_name["no"].error or "")
    assert not report.passed
    assert (tmp_path / "inside" / "predictions.json").exists()
    text = table(report)
    assert "PASS" in text and text.count(" FAIL\n") == 2 and "2 of 3 controls FAILED" in text


def test_a_control_needs_exactly_one_way_to_play_and_a_band() -> None:
    with pytest.raises(ValidationError, match="exactly one of run and score"):
        Control(name="x", kind="floor", description="", metric="m", low=0, high=1)
    with pytest.raises(ValidationError, match="is empty"):
        _score("x", 0.5, 0.4)
    with pytest.raises(ValidationError, match="named twice"):
        ControlSuite(name="s", controls=(_score("a", 0, 1), _score("a", 0, 1)))


def test_validate_a_registered_suite_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "v.json"
    runs = tmp_path / "runs"
    code = main(["validate", "toy", "--only", "repeat,oracle", "-o", str(out), "--out", str(runs)])
    assert code == 0
    captured = capsys.readouterr()
    assert "repeat" in captured.out and "oracle" in captured.out
    assert "[1/2] repeat" in captured.err  # progress on stderr
    report = json.loads(out.read_text())
    assert [r["name"] for r in report["results"]] == ["repeat", "oracle"]
    assert (runs / "oracle" / "manifest.json").exists()  # --out keeps each control's run
    manifest = json.loads((runs / "oracle" / "manifest.json").read_text())
    assert manifest["roles"]["guesser"]["privileged"] is True


def test_limit_is_said_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --limit 1 over the toy's first task: bisect still finds it, the table says so
    code = main(["validate", "toy", "--only", "bisect", "--limit", "1"])
    assert code == 0
    assert "--limit 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["validate", "nope"], "unknown control suite 'nope'"),
        (["validate", "toy", "--only", "nope"], "unknown control or family 'nope'"),
        (["validate", "toy", "--limit", "0"], "--limit must be at least 1"),
    ],
)
def test_usage_errors_are_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_list_shows_the_controls_without_playing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "toy", "--list"]) == 0
    out = capsys.readouterr().out
    assert "oracle" in out and "ceiling" in out and "[0, 0.1]" in out


FAILING = ControlSuite(name="failing", controls=(_score("outside", 0.5, 1.0),))


def test_a_control_outside_its_band_exits_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from todeval.registry import Registry, discover

    def with_failing() -> Registry:
        registry = discover()
        registry.controls("failing", f"{__name__}:FAILING")
        return registry

    monkeypatch.setattr("todeval.validation.command.discover", with_failing)
    out = tmp_path / "v.json"
    assert main(["validate", "failing", "--seed", "2", "-o", str(out)]) == 4
    assert "failing: 1 of 1 controls FAILED" in capsys.readouterr().out
    assert json.loads(out.read_text())["passed"] is False


def test_set_plays_the_run_controls_on_a_users_own_pack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate booking --domain PACK`` / ``--set domain=PACK`` (issue 44.4): booking's run
    controls on a pack of the user's own, each once (the MultiWOZ and car-rental variants
    become one run)."""
    import shutil

    from todeval.benchmarks.booking.domains.cli import pack_folder

    pack = tmp_path / "my-pack"
    shutil.copytree(pack_folder("car-rental"), pack)
    out = tmp_path / "v.json"
    names = "silent/clemtodd,rule/clemtodd,silent/strict,rule/strict,silent/strict/car-rental"
    argv = ["validate", "booking", "--set", f"domain={pack}", "--only", names]
    assert main([*argv, "--limit", "3", "-o", str(out), "--quiet"]) == 0
    results = json.loads(out.read_text())["results"]
    assert [r["name"] for r in results] == [
        f"silent/clemtodd [domain={pack}]",
        f"rule/clemtodd [domain={pack}]",
        f"silent/strict [domain={pack}]",
        f"rule/strict [domain={pack}]",
    ]
    assert json.loads(out.read_text())["adversaries"] == []  # --set: controls only
    assert main(["validate", "booking", "--set", "domain"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    # the suite declares domain as an option of its own: --domain PACK is the same
    again = tmp_path / "again.json"
    argv = ["validate", "booking", "--domain", str(pack), "--only", "silent/strict"]
    assert main([*argv, "--limit", "2", "-o", str(again), "--quiet"]) == 0
    assert [r["name"] for r in json.loads(again.read_text())["results"]] == [
        f"silent/strict [domain={pack}]"
    ]
    capsys.readouterr()
    assert main(["validate", "booking", "--domian", str(pack)]) == 2
    assert "did you mean --domain?" in capsys.readouterr().err
    assert main(["validate", "booking", "--domain"]) == 2
    assert "--domain needs a value" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # the toy declares no such option
        main(["validate", "toy", "--domain", str(pack)])
    assert refused.value.code == 2
    assert "unrecognized arguments: --domain" in capsys.readouterr().err
