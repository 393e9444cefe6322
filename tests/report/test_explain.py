"""Score explanations (todeval.report.explain): a benchmark's explainer, loaded from its
profile, read from real records' details; what the page receives; and the generic view's
triggers (no explainer, one that cannot load, one that fails on a record)."""

from __future__ import annotations

from pathlib import Path

from tests.report.helpers import run_cli
from todeval.core.records import EpisodeRecord
from todeval.registry import discover
from todeval.report.explain import Explainer, ScoreExplanation, explanation, load_explainer
from todeval.runner.store import RunDirectory


def _record(run: Path, episode_id: str | None = None) -> EpisodeRecord:
    for record in RunDirectory(run).iter_episodes():
        if episode_id is None or record.episode_id == episode_id:
            return record
    raise AssertionError(episode_id)


def _explainer(benchmark: str) -> Explainer | None:
    return load_explainer(discover().profiles[benchmark].explainer)


def test_booking_explains_each_goal_slot_as_the_scorer_saw_it(runs: dict[str, Path]) -> None:
    explain = _explainer("booking")
    assert explain is not None
    wrong = explain(_record(runs["corpus"], "test/007-sng01353#0"))
    assert isinstance(wrong, ScoreExplanation) and wrong.metric == "booking.booking_accuracy"
    assert "1 of 7 goal slot(s) missed: hotel info.parking" in wrong.summary
    (hotel,) = wrong.groups
    missed = [c for c in hotel.checks if c.passed is False]
    assert [(c.name, c.expected, c.actual) for c in missed] == [("info.parking", "yes", "no")]
    assert ("book.stay", "2 (or 3)", "2") in [(c.name, c.expected, c.actual) for c in hotel.checks]
    # the page's form: each check a list
    page = explanation(explain, _record(runs["corpus"], "test/007-sng01353#0"))
    assert page is not None and ["info.parking", False, "yes", "no"] in page["groups"][0]["checks"]
    # no booking at all: every slot missed, said once per domain
    none = explain(_record(runs["llm"]))
    assert none is not None and none.groups[0].note == "no booking"
    assert all(c.passed is False and c.actual == "" for c in none.groups[0].checks)


def test_bargain_explains_each_turn(tmp_path: Path) -> None:
    out = tmp_path / "bargain"
    run_cli("run", "bargain", "--labeller", "keyword", "--limit", "3", "--out", str(out), "--quiet")
    explain = _explainer("bargain")
    assert explain is not None
    for record in RunDirectory(out).iter_episodes():
        found = explain(record)
        assert found is not None and found.metric == "bargain.f1"
        turns = record.details["turns"]
        assert len(found.groups[0].checks) == len(turns)
        correct = sum(t["correct"] for t in turns)
        assert f"{correct} correct" in found.summary
        for check, turn in zip(found.groups[0].checks, turns, strict=True):
            assert check.expected == ", ".join(turn["gold"])
            assert check.passed == (not turn["failed"] and turn["missed"] + turn["incorrect"] == 0)


def test_the_generic_view_when_there_is_nothing_to_explain(runs: dict[str, Path]) -> None:
    record = _record(runs["corpus"])
    assert load_explainer(None) is None
    assert load_explainer("no.such.module:explain") is None  # a report never fails over one
    assert load_explainer("todeval.report.explain:__doc__") is None  # not a function
    assert explanation(None, record) is None

    def broken(r: EpisodeRecord) -> ScoreExplanation:
        raise KeyError("details the explainer did not expect")

    assert explanation(broken, record) is None
    assert explanation(lambda r: None, record) is None
    assert discover().profiles["clarq"].explainer is None  # shown the generic way
