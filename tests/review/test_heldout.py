"""The booking review checked against episodes it was not written for (issue 42, item 6).

Ten sets (``review_heldout``, ``2`` ... ``10``), each labelled and committed before the review
was run on it; the first holds 100 failed booking episodes of players the rules were not
written against, each labelled by hand from its transcript. These tests recompute the
review's per-verdict precision and recall against the labels and check that
docs/user-simulators.md shows what the code computes, and check the readings the study's fixes
added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.booking.review import (
    NO_EFFECT,
    UNVERIFIED,
    mentions,
    review_episode,
    times,
)
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.core.records import EpisodeRecord
from todeval.review import Review
from todeval.testing.booking_heldout import LABELS, StudyFigures, rehomed, study

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "review_heldout"
SECOND = ROOT / "tests" / "fixtures" / "review_heldout2"
THIRD = ROOT / "tests" / "fixtures" / "review_heldout3"
FOURTH = ROOT / "tests" / "fixtures" / "review_heldout4"
FIFTH = ROOT / "tests" / "fixtures" / "review_heldout5"
SIXTH = ROOT / "tests" / "fixtures" / "review_heldout6"
SEVENTH = ROOT / "tests" / "fixtures" / "review_heldout7"
EIGHTH = ROOT / "tests" / "fixtures" / "review_heldout8"
NINTH = ROOT / "tests" / "fixtures" / "review_heldout9"
TENTH = ROOT / "tests" / "fixtures" / "review_heldout10"
SETS = [FIXTURE, SECOND, THIRD, FOURTH]
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


@pytest.mark.parametrize(
    "fixture",
    [SECOND, THIRD, FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH],
    ids=["second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"],
)
def test_the_documented_later_set_tables_are_what_the_review_computes(fixture: Path) -> None:
    """The second to sixth sets, each made and labelled after a round of fixes
    (docs/user-simulators.md)."""
    assert study(fixture).table() in DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("fixture", "size"),
    [
        (FOURTH, 60),
        (FIFTH, 40),
        (SIXTH, 64),
        (SEVENTH, 58),
        (EIGHTH, 50),
        (NINTH, 36),
        (TENTH, 68),
    ],
    ids=["fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"],
)
def test_the_later_sets_are_labelled_failures_of_new_tasks(fixture: Path, size: int) -> None:
    labels = [json.loads(t) for t in (fixture / "labels.jsonl").read_text().splitlines()]
    episodes = [json.loads(t) for t in (fixture / "episodes.jsonl").read_text().splitlines()]
    assert sorted(label["index"] for label in labels) == list(range(size))
    assert [e["index"] for e in episodes] == list(range(size))
    assert {label["label"] for label in labels} <= set(LABELS)
    assert all(label["reason"].strip() for label in labels)
    assert all(e["record"]["outcome"] != "success" for e in episodes)
    assert all("review" not in e["record"] for e in episodes)  # written with --no-review
    every = [*SETS, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH]
    earlier = {
        json.loads(t)["record"]["task_id"]
        for before in every[: every.index(fixture)]
        for t in (before / "episodes.jsonl").read_text().splitlines()
    }
    assert not earlier & {e["record"]["task_id"] for e in episodes}  # no task played before


@pytest.mark.parametrize("fixture", SETS, ids=["first", "second", "third", "fourth"])
def test_simulator_and_both_are_precise_on_every_set(fixture: Path) -> None:
    """The target of issue 42: precision of 'simulator' and 'both' >= 0.9 where the review
    calls them. With the rules as they are now no set is held out any more (the fourth was, for
    commit 39d6de1's rules: simulator 21/21, both never called; the fifth, for 1bd2bf0's:
    simulator 24/24, both 0/1 -- see the docs). The fifth set's 'both' (2/3 now) misses it and
    is pinned by its documented table, not here."""
    by_verdict = {v.verdict: v for v in study(fixture).verdicts}
    for verdict in ("simulator", "both"):
        v = by_verdict[verdict]
        assert v.called == 0 or v.hits / v.called >= 0.9, v


def _review(fixture: Path, index: int) -> Review:
    for t in (fixture / "episodes.jsonl").read_text().splitlines():
        line = json.loads(t)
        if line["index"] == index:
            task = rehomed(BookingTask.model_validate(line["task"]), fixture)
            return review_episode(task, EpisodeRecord.model_validate(line["record"]))
    raise AssertionError(index)


def test_a_question_about_another_domain_is_no_withheld_value() -> None:
    """The turn-1 blame of issue 42, in the form the fourth set found it: the system's first
    question "For the train: ... what time you want to leave (or arrive)?" read as asking for
    the restaurant's booking time. It names the train, which holds no booking time, so the
    fault is listed unverified and the system's own abort is the verdict."""
    review = _review(FOURTH, 34)
    (withheld,) = [f for f in review.faults if f.kind == "withheld_value"]
    assert withheld.turn == 1 and withheld.evidence.startswith(UNVERIFIED)
    assert review.verdict == "agent"


def test_unverified_simulator_faults_do_not_make_the_verdict() -> None:
    """A goal-blind user on the unrealistic set: its goal's values ("-5000 people", "rainyday")
    are no words the review can be certain of, so its ending early is listed unverified and the
    verdict abstains (unclear) rather than guess; the same user on a MultiWOZ goal is verified."""
    odd = _review(FOURTH, 13)
    assert odd.verdict == "unclear"
    assert odd.faults and all(f.evidence.startswith(UNVERIFIED) for f in odd.faults)
    plain = _review(FOURTH, 15)
    assert plain.verdict == "simulator"
    assert any(
        f.kind == "early_done" and not f.evidence.startswith(UNVERIFIED) for f in plain.faults
    )


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


def test_a_sentence_s_first_word_is_no_name() -> None:
    """The fifth set's misreading: "On monday." was left unverified because the name check took
    the capitalised "On" for part of a name; the wrong-train user against the refusing system
    is 'both' (each alone loses the episode), as labelled."""
    review = _review(FIFTH, 28)
    (said,) = [f for f in review.faults if f.kind == "contradicts_goal"]
    assert said.evidence == "On monday."
    assert review.verdict == "both"


def test_the_sixth_set_counts_after_its_fix() -> None:
    """The sixth set, pinned per verdict (labelled, called, right). Held out, the rules of
    f6e52e5 gave 'simulator' 13/13 and 'both' 1/5 (commit 1a0add7 pinned agent 20/26/15,
    simulator 20/13/13, both 22/5/1, unclear 2/20/2); after the fix below it is no longer held
    out: 'both' 1/1."""
    by_verdict = {v.verdict: (v.labelled, v.called, v.hits) for v in study(SIXTH).verdicts}
    assert by_verdict == {
        "agent": (20, 30, 19),
        "simulator": (20, 13, 13),
        "both": (22, 1, 1),
        "unclear": (2, 20, 2),
    }


@pytest.mark.parametrize(
    ("index", "said"),
    [
        (4, "I would like something with at least three stars."),
        (6, "Yes, I would prefer the west please."),
        (21, "Yes, please try 5-star hotels with free parking."),
        (62, "I'd like to find somewhere to stay in the south, please."),
    ],
    ids=["met-by-a-venue", "open-slot", "taken-back", "booked-over"],
)
def test_a_statement_that_cost_nothing_makes_no_verdict(index: int, said: str) -> None:
    """The sixth set's wrong 'both' calls: a value outside the goal that a search carried
    (so verified) but that cost nothing -- a star rating a venue of the goal has (#4), an area
    the restaurant's goal leaves open with such a venue in it (#6), five stars taken back for
    the goal's three (#21), an area the system booked over with the goal's own hotel (#62) --
    is listed 'no effect: ' and the system's refusal or booking is the verdict."""
    review = _review(SIXTH, index)
    assert any(f.evidence == NO_EFFECT + said for f in review.faults)
    assert review.verdict == "agent"


def test_a_statement_that_leads_away_from_the_goal_still_counts() -> None:
    """The first set's #6: 'a hotel in the centre' where the goal names lovell lodge, which is
    not in the centre: no venue of the goal has it, so it counts (the refusing system refused
    too: 'both', as labelled)."""
    review = _review(FIXTURE, 6)
    (centre,) = [f for f in review.faults if f.kind == "not_in_goal"]
    assert centre.evidence == "Hi, I'm looking for a hotel in the centre."
    assert review.verdict == "both"


def test_the_seventh_set_counts_after_its_fix() -> None:
    """The seventh set, pinned per verdict (labelled, called, right). Held out, the rules of
    aecd6dd gave 'simulator' 4/7 and 'both' 13/17 (commit 3914083 pinned agent 34/28/27,
    simulator 4/7/4, both 16/17/13, unclear 4/6/4); after the fix below it is no longer held
    out."""
    by_verdict = {v.verdict: (v.labelled, v.called, v.hits) for v in study(SEVENTH).verdicts}
    assert by_verdict == {
        "agent": (34, 32, 31),
        "simulator": (4, 4, 4),
        "both": (16, 15, 15),
        "unclear": (4, 7, 4),
    }


def test_a_value_taken_back_in_words_makes_no_verdict() -> None:
    """The seventh set's #38: "on friday" (the goal says thursday), then "Sorry, I meant
    thursday, not friday." the next turn; the system had sent a booking without the time and
    never tried again. The wrong day was taken back, so the failure is the system's."""
    review = _review(SEVENTH, 38)
    (friday,) = [f for f in review.faults if f.kind == "contradicts_goal"]
    assert friday.evidence.startswith(NO_EFFECT)
    assert review.verdict == "agent"


def test_a_value_said_for_another_domain_takes_nothing_back() -> None:
    """The sixth set's #10: a car for "three days" (its goal: 2), then the car park "for
    sunday, two days" once the system had moved on to the car park: the 2 is the car park's,
    so the car's slip stands."""
    review = _review(SIXTH, 10)
    (three,) = [f for f in review.faults if f.kind == "contradicts_goal"]
    assert not three.evidence.startswith((NO_EFFECT, UNVERIFIED))
    assert review.verdict == "simulator"


def test_without_is_a_negation() -> None:
    """The seventh set's #5: "without free parking" is no statement of free parking."""
    said = mentions("with four stars, that is pricey and without free parking.")
    assert said == {"stars": {"4"}, "pricerange": {"expensive"}}
    assert _review(SEVENTH, 5).verdict == "agent"


def test_a_refusal_for_you_is_a_refusal() -> None:
    """The seventh set's #9: "I'm sorry, I am not able to book that for you today." is the
    system refusing outright (not a refused value, as "I can't book that for 12 people" is)."""
    review = _review(SEVENTH, 9)
    assert any(f.kind == "gave_up" and "for you today" in f.evidence for f in review.faults)
    assert review.verdict == "both"


def test_the_eighth_set_held_out_counts() -> None:
    """The held-out measurement of the rules as they are (2bbcb94, the seventh set's fix) on
    the eighth set, committed with its labels in 1a6be50 before any review of it: per verdict,
    labelled, called and right. 'simulator' 1/1; 'both' never called (no precision figure)."""
    by_verdict = {v.verdict: (v.labelled, v.called, v.hits) for v in study(EIGHTH).verdicts}
    assert by_verdict == {
        "agent": (23, 29, 23),
        "simulator": (15, 1, 1),
        "both": (5, 0, 0),
        "unclear": (7, 20, 7),
    }


def test_the_ninth_set_held_out_counts() -> None:
    """The rules as they are (2bbcb94) on the ninth set, committed with its labels in 3abdedf
    before any review of it: neither 'simulator' nor 'both' called (no precision figure); the
    user's "same group" party is another goal domain's own value, so no fault at all."""
    by_verdict = {v.verdict: (v.labelled, v.called, v.hits) for v in study(NINTH).verdicts}
    assert by_verdict == {
        "agent": (6, 14, 6),
        "simulator": (17, 0, 0),
        "both": (10, 0, 0),
        "unclear": (3, 22, 2),
    }


def test_the_tenth_set_held_out_counts() -> None:
    """The rules as they are (2bbcb94) on the tenth set, committed with its labels in 8e3baf5
    before any review of it: 'simulator' 42/43 and 'both' 14/15. The two wrong calls are left
    as they are (nothing was changed after this measurement): #64, a table's party credited to
    a train the user never raised ('both' for 'simulator'), and #24, the partly refusing
    system's wording read as no refusal ('simulator' for 'both')."""
    by_verdict = {v.verdict: (v.labelled, v.called, v.hits) for v in study(TENTH).verdicts}
    assert by_verdict == {
        "agent": (0, 5, 0),
        "simulator": (47, 43, 42),
        "both": (21, 15, 14),
        "unclear": (0, 5, 0),
    }
    assert _review(TENTH, 64).verdict == "both"
    assert _review(TENTH, 24).verdict == "simulator"
