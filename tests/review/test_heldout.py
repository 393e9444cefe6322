"""The booking review checked against episodes it was not written for (issue 42, item 6).

``tests/fixtures/review_heldout`` holds 100 failed booking episodes of players the rules were
not written against, each labelled by hand from its transcript (the labels were committed
before the review was run on them). These tests recompute the review's per-verdict precision
and recall against those labels and check that docs/user-simulators.md shows what the code
computes, and check the readings the study's fixes added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.booking.review import mentions, times
from todeval.testing.booking_heldout import LABELS, StudyFigures, study

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "review_heldout"
SECOND = ROOT / "tests" / "fixtures" / "review_heldout2"
THIRD = ROOT / "tests" / "fixtures" / "review_heldout3"
DOC = ROOT / "docs" / "user-simulators.md"


@pytest.fixture(scope="module")
def figures() -> StudyFigures:
    return study(FIXTURE)


def test_every_episode_has_one_label_and_a_reason() -> None:
    labels = [json.loads(t) for t in (FIXTURE / "labels.jsonl").read_text().splitlines()]
    episodes = [json.loads(t) for t in (FIXTURE / "episodes.jsonl").read_text().splitlines()]
    assert sorted(label["index"] for label in labels) == list(range(100))
    assert {label["label"] for label in labels} <= set(LABELS)
    assert all(label["reason"].strip() for label in labels)
    assert all(e["record"]["outcome"] != "success" for e in episodes)
    assert all("review" not in e["record"] for e in episodes)  # written with --no-review


def test_the_documented_table_is_what_the_review_computes(figures: StudyFigures) -> None:
    """The table in docs/user-simulators.md is recomputed here, figure for figure."""
    assert figures.table() in DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("fixture", [SECOND, THIRD], ids=["second", "third"])
def test_the_documented_later_set_tables_are_what_the_review_computes(fixture: Path) -> None:
    """The second and third sets, each made and labelled after a round of fixes
    (docs/user-simulators.md)."""
    assert study(fixture).table() in DOC.read_text(encoding="utf-8")


def test_simulator_and_both_are_precise_on_the_held_out_set(figures: StudyFigures) -> None:
    """The target of issue 42: precision of 'simulator' and 'both' >= 0.9 (measured after the
    fixes, on the same episodes: no longer held out -- see the docs)."""
    by_verdict = {v.verdict: v for v in figures.verdicts}
    for verdict in ("simulator", "both"):
        v = by_verdict[verdict]
        assert v.called > 0 and v.hits / v.called >= 0.9, v


def test_times_are_read_in_digits_and_words() -> None:
    """The turn-1 blame of issue 42: a restaurant's time was never read, so every system that
    asked "what time?" made the user look as if it withheld it."""
    assert times("for thursday and at half past eleven in the morning") == {"time": {"11:30"}}
    assert times("at quarter to five in the afternoon") == {"time": {"16:45"}}
    assert times("a table at 1400 on wednesday") == {"time": {"14:00"}}
    assert times("leaving after 9:00 pm") == {"leaveat": {"21:00"}}
    assert times("getting there by 12.45 in the afternoon") == {"arriveby": {"12:45"}}
    assert times("in cambridge by 3:00") == {"arriveby": {"03:00", "15:00"}}  # either reading


def test_people_are_read_from_a_table_or_a_party() -> None:
    assert mentions("Yes I need a table for 4 on Saturday.")["people"] == {"4"}
    assert mentions("Can I book a reservation for 7 at 13:00?")["people"] == {"7"}
    assert mentions("change the number of people in my party to 5")["people"] == {"5"}
    assert "people" not in mentions("please book it for 3 nights")
    assert mentions("somewhere mid-priced with free parking") == {
        "pricerange": {"moderate"},
        "parking": {"yes"},
    }
