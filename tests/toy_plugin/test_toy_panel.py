"""The toy gets simulator panels with no edit outside its folder: ``--hosts``, ``--guessers``,
``--panel FILE``, panel.json from the shared model, and panels detected among its runs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from todeval_toy.game import PROFILE

from todeval.cli import main
from todeval.core.records import Manifest, Summary
from todeval.panels.detect import detect_panels
from todeval.panels.model import read_panel
from todeval.results.profile import ProfileBook
from todeval.runner.store import RunDirectory

LIMIT = "12"


def _toy(*args: str) -> int:
    return main(["run", "toy", "--quiet", "--limit", LIMIT, *args])


def _summary(run: Path) -> Summary:
    summary = RunDirectory(run).read_summary()
    assert summary is not None
    return summary


def test_panel_of_two_guessers_and_two_hosts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "panel"
    code = main(
        ["run", "toy", "--hosts", "rule,vague", "--guessers", "bisect,random", "--out", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "spread across hosts" in printed and "top guesser changes across hosts: yes" in printed
    raw = json.loads((out / "panel.json").read_text(encoding="utf-8"))
    assert raw["schema_version"] == 2 and raw["benchmark"] == "toy"
    panel = read_panel(out / "panel.json")
    assert (panel.subject, panel.varied, panel.metric) == ("guesser", "host", "toy.success")
    assert panel.members == {"guesser": ["bisect", "random"], "host": ["rule", "vague"]}
    assert panel.runs == {
        f"{g}|{h}": f"{g}__{h}" for g in ("bisect", "random") for h in ("rule", "vague")
    }
    # every figure is the run's own summary
    for pair, rel in panel.runs.items():
        guesser, host = pair.split("|")
        manifest = RunDirectory(out / rel).read_manifest()
        assert manifest.roles["guesser"].player == guesser
        assert manifest.roles["host"].player == host
        micro = _summary(out / rel).metrics["toy.success"].micro
        assert panel.spread[guesser].per_member[host] == micro
    for sp in panel.spread.values():
        values = [sp.per_member[h].value or 0.0 for h in ("rule", "vague")]
        assert sp.spread_max_min == pytest.approx(max(values) - min(values))
        assert sp.std_sample == pytest.approx(statistics.stdev(values))
        assert (sp.best, sp.worst) == ("rule", "vague")
    bisect = panel.spread["bisect"].per_member
    assert bisect["rule"].value == 1.0 and bisect["vague"].value == 0.0  # it repeats its guess
    assert 0 < (panel.spread["random"].per_member["vague"].value or 0) < 1
    # rank stability: bisect is best under the rule host, random under the vague one
    rs = panel.rank_stability
    assert rs is not None
    assert rs.rankings == {"rule": ["bisect", "random"], "vague": ["random", "bisect"]}
    assert rs.kendall_tau == {"rule|vague": -1.0}
    assert rs.top == {"rule": "bisect", "vague": "random"} and rs.top_changes is True
    # the same command again resumes every run and writes the same panel
    assert main(["run", "toy", "--quiet", "--hosts", "rule,vague", "--guessers",
                 "bisect,random", "--out", str(out)]) == 0  # fmt: skip
    assert read_panel(out / "panel.json") == panel


def test_panel_file_and_the_base_guesser(tmp_path: Path) -> None:
    spec = tmp_path / "panel.toml"
    spec.write_text(
        '[[host]]\nname = "honest"\nplayer = "rule"\n\n[[host]]\nplayer = "vague"\n',
        encoding="utf-8",
    )
    out = tmp_path / "p"
    assert _toy("--panel", str(spec), "--guesser", "random", "--out", str(out)) == 0
    panel = read_panel(out / "panel.json")
    assert panel.members == {"guesser": ["random"], "host": ["honest", "vague"]}
    assert panel.rank_stability is None
    assert sorted(p.name for p in out.iterdir()) == [
        "panel.json",
        "random__honest",
        "random__vague",
    ]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--hosts", "rule,nope"], 2, "unknown host 'nope'"),
        (["--hosts", "rule,rule"], 2, "host names must be distinct"),
        (["--hosts", "rule,vague=openai:m@http://127.0.0.1:1/v1"], 2, "the host takes no model"),
        (["--guessers", "bisect,llm"], 2, "--guesser-model"),
    ],
)
def test_a_bad_member_fails_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str
) -> None:
    out = tmp_path / "p"
    assert _toy(*args, "--out", str(out)) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_bad_panel_file_is_exit_3_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "panel.toml"
    spec.write_text('[[users]]\nname = "a"\nplayer = "agenda"\n', encoding="utf-8")
    out = tmp_path / "p"
    assert _toy("--panel", str(spec), "--out", str(out)) == 3
    assert (
        "unknown table [[users]]; a panel file has [[guesser]], [[host]]" in capsys.readouterr().err
    )
    assert not out.exists()


def test_runs_differing_only_in_host_are_a_detected_panel(tmp_path: Path) -> None:
    for name, args in {
        "rule": [],
        "vague": ["--host", "vague"],
        "random": ["--guesser", "random"],  # another guesser: not in bisect's panel
        "strict": ["--host", "vague", "--protocol", "strict"],  # another protocol
        "fewer": ["--host", "vague", "--limit", "6"],  # another selection
    }.items():
        assert _toy(*args, "--out", str(tmp_path / name)) == 0
    runs = sorted(tmp_path.iterdir())
    manifests = {run.name: RunDirectory(run).read_manifest() for run in runs}

    def manifest_of(name: str) -> Manifest:
        return manifests[name]

    [panel] = detect_panels(sorted(manifests), manifest_of, ProfileBook({"toy": PROFILE}))
    assert panel.benchmark == "toy" and panel.subject == "bisect"
    assert panel.roles.varied == "host"
    assert panel.members == [("rule", "rule"), ("vague", "vague")]
    # without a profile declaring panel roles, nothing is detected
    assert detect_panels(sorted(manifests), manifest_of, ProfileBook()) == []
