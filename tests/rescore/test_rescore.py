"""``todeval rescore`` and the scorer-version refusals of compare, report and view."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from todeval.benchmarks.booking import scoring
from todeval.cli import main
from todeval.core.records import EpisodeRecord
from todeval.results.rescore import (
    UNRECORDED,
    recompute,
    refuse_mixed_runs,
    rescore_run,
    run_scorer_version,
    runs_under,
)

GOLDEN = Path(__file__).parent / "golden"


def _copy(name: str, to: Path) -> Path:
    shutil.copytree(GOLDEN / name, to)
    return to


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "episodes.jsonl").read_text("utf-8").splitlines()]


def _files(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run.iterdir())}


def _stay_never_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed scoring rule: a booked stay never satisfies the goal's."""
    rule = scoring.slot_matches

    def changed(key: str, booked: str | None, goal: str, *args: Any, **kwargs: Any) -> bool:
        return False if key == "stay" else rule(key, booked, goal, *args, **kwargs)

    monkeypatch.setattr(scoring, "slot_matches", changed)


def test_a_changed_rule_shows_the_flips_and_writes_only_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy("booking-strict", tmp_path / "run")
    before = _files(run)
    _stay_never_matches(monkeypatch)

    assert main(["rescore", str(run)]) == 0  # nothing written without --out / --in-place
    printed = capsys.readouterr().out
    assert _files(run) == before
    assert "nothing written" in printed
    # the two hotel bookings (a stay each) flip from 1 to 0, and their episodes fail now
    row = next(line for line in printed.splitlines() if "booking.booking_accuracy " in line)
    assert row.split()[1:4] == ["0.3333", "0.0000", "-0.3333"]
    assert row.endswith("2 (0/2)")
    assert "booking.booking_accuracy changed in: test/014-sng0775#0, test/017-sng1004#0" in printed
    assert "outcome changed in 2: test/014-sng0775#0, test/017-sng1004#0" in printed
    assert "label failure_class changed in 2" in printed

    out = tmp_path / "regraded"
    assert main(["rescore", str(run), "--out", str(out)]) == 0
    assert _files(run) == before  # the run itself is never edited without --in-place
    new = {r["episode_id"]: r for r in _records(out)}
    hotel = new["test/014-sng0775#0"]
    assert hotel["outcome"] == "failure" and hotel["metrics"]["booking.booking_accuracy"] == 0.0
    assert hotel["labels"]["failure_class"] == "wrong_booking"
    assert hotel["details"]["domain_scores"]["hotel"]["booked"] is False
    ends = [e for e in hotel["events"] if e["kind"] == "episode_end"]
    assert ends[-1]["data"]["outcome"] == "failure"  # the record agrees with itself
    assert ends[-1]["data"]["dialogue_outcome"] == "success"
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["metrics"]["booking.booking_accuracy"]["micro"]["value"] == 0.0
    assert summary["outcomes"]["success"] == 0 and summary["scorer_version"] == "2"
    assert (out / "manifest.json").read_bytes() == before["manifest.json"]
    # and the written run reads back as one
    assert recompute(out).records == [EpisodeRecord.model_validate(r) for r in _records(out)]


def test_the_difference_has_a_paired_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _copy("booking-strict", tmp_path / "run")
    _stay_never_matches(monkeypatch)
    result = rescore_run(run, resamples=500)
    change = next(m for m in result.metrics if m.metric == "booking.booking_accuracy")
    assert (change.n, change.up, change.down) == (6, 0, 2)
    assert change.diff == pytest.approx(-1 / 3)
    assert change.ci_low is not None and change.ci_high is not None
    assert change.ci_low <= change.diff <= change.ci_high <= 0  # a draw may miss both flips
    unchanged = next(m for m in result.metrics if m.metric == "booking.turns")
    assert unchanged.changed == [] and unchanged.ci_low == unchanged.ci_high == 0.0


def test_in_place_regrades_an_old_run_and_stamps_the_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run written before scorer versions still loads, and re-grading stamps it."""
    run = _copy("toy", tmp_path / "old")
    lines = _records(run)
    for r in lines:
        del r["scorer_version"]
    (run / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    del summary["scorer_version"]
    (run / "summary.json").write_text(json.dumps(summary), "utf-8")
    assert run_scorer_version(run) is None
    assert EpisodeRecord.model_validate(lines[0]).scorer_version is None
    assert "scorer_version" not in EpisodeRecord.model_validate(lines[0]).model_dump_json()

    assert main(["rescore", str(run), "--in-place"]) == 0
    printed = capsys.readouterr().out
    assert f"scorer {UNRECORDED} -> 1" in printed and "no metric changed" in printed
    assert run_scorer_version(run) == "1"
    assert {r["scorer_version"] for r in _records(run)} == {"1"}
    assert [r["metrics"] for r in _records(run)] == [r["metrics"] for r in lines]


def _bump(run: Path, version: str) -> None:
    """``run`` as a later scorer would have written it."""
    for name in ("episodes.jsonl", "summary.json"):
        path = run / name
        text = path.read_text("utf-8")
        text = text.replace('"scorer_version":"1"', f'"scorer_version":"{version}"')
        text = text.replace('"scorer_version": "1"', f'"scorer_version": "{version}"')
        path.write_text(text, "utf-8")


def test_compare_and_report_refuse_runs_of_other_scorer_versions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _copy("toy", tmp_path / "runs" / "a")
    b = _copy("toy", tmp_path / "runs" / "b")
    _bump(b, "2")
    assert main(["compare", str(a), str(b)]) == 4
    err = capsys.readouterr().err
    assert "toy scorer 1" in err and "by scorer 2" in err and "todeval rescore" in err
    assert main(["report", str(a), str(b), "-o", str(tmp_path / "r.html")]) == 4
    assert "scorer 1" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(Exception, match="scorer 2"):
        refuse_mixed_runs(runs_under(tmp_path / "runs"))

    # re-graded under the installed scorer, the two sit side by side again
    regraded = tmp_path / "runs-regraded"
    assert main(["rescore", str(b), "--out", str(regraded)]) == 0
    assert "scorer 2 -> 1" in capsys.readouterr().out
    assert main(["compare", str(a), str(regraded)]) == 0


def test_view_refuses_a_directory_of_mixed_scorer_versions(tmp_path: Path) -> None:
    _copy("toy", tmp_path / "runs" / "a")
    _bump(_copy("toy", tmp_path / "runs" / "b"), "2")
    done = subprocess.run(
        [sys.executable, "-m", "todeval", "view", str(tmp_path / "runs"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4, done.stderr
    assert "toy scorer 1" in done.stderr and "scorer 2" in done.stderr


def test_bad_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy("toy", tmp_path / "run")
    assert main(["rescore", str(tmp_path / "nothing")]) == 3
    assert main(["rescore", str(run), "--out", str(run)]) == 2
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x", "utf-8")
    assert main(["rescore", str(run), "--out", str(busy)]) == 4
    with pytest.raises(SystemExit) as exc:
        main(["rescore", str(run), "--out", str(tmp_path / "o"), "--in-place"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "not a run directory" in err


def test_in_place_waits_for_no_run_and_api_report_refuses_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from todeval import api
    from todeval.core.lock import RUN_LOCK, hold
    from todeval.errors import RefusedError

    run = _copy("toy", tmp_path / "runs" / "a")
    before = _files(run)
    with hold(run / RUN_LOCK, "a run writing it"):  # a run still appending its episodes
        assert main(["rescore", str(run), "--in-place"]) == 4
    assert "in use" in capsys.readouterr().err
    assert {k: v for k, v in _files(run).items() if k != RUN_LOCK} == before
    assert main(["rescore", str(run), "--out", str(tmp_path / "copy")]) == 0
    assert RUN_LOCK not in _files(tmp_path / "copy")  # the lock stays with its run

    _bump(_copy("toy", tmp_path / "runs" / "b"), "2")
    with pytest.raises(RefusedError, match="scorer 2"):
        api.report([run, tmp_path / "runs" / "b"], tmp_path / "r.html")


def test_several_runs_each_to_its_own_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [_copy(name, tmp_path / "in" / name) for name in ("toy", "clarq")]
    out = tmp_path / "out"
    assert main(["rescore", *map(str, runs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("no metric changed") == 2
    for run in runs:
        assert [r["metrics"] for r in _records(out / run.name)] == [
            r["metrics"] for r in _records(run)
        ]
