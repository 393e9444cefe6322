"""The rule system's slot tracker: tricky phrases, state updates, and corpus slot F1."""

from __future__ import annotations

import pytest

from todeval.benchmarks.booking.systems import SlotTracker, evaluate_tracker
from todeval.benchmarks.booking.systems.nlu import system_asks
from todeval.benchmarks.booking.systems.text import find_times, normalise_time
from todeval.benchmarks.booking.systems.tracker_eval import canonical_value, gold_triples
from todeval.benchmarks.booking.systems.vocab import vocabulary


def triples(text: str, task_set: str = "test", **context: object) -> set[tuple[str, str, str]]:
    tracker = SlotTracker(task_set)
    if "active" in context:
        tracker.active = str(context["active"])
    if "expected" in context:
        tracker.expect(list(context["expected"]))  # type: ignore[call-overload]
    return tracker.parse(text).triples()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7:45 pm", "19:45"),
        ("at 19:45", "19:45"),
        ("1300hrs", "13:00"),
        ("around noon", "12:00"),
        ("half past seven in the evening", "19:30"),
        ("11 am", "11:00"),
        ("midnight", "00:00"),
    ],
)
def test_clock_times(text: str, expected: str) -> None:
    assert find_times(text)[0][2] == expected


@pytest.mark.parametrize(("raw", "value"), [("9:15", "09:15"), ("after 19:45", "19:45"),
                                            ("10", "10:00"), ("0930", "09:30")])  # fmt: skip
def test_normalise_time(raw: str, value: str) -> None:
    assert normalise_time(raw) == value


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("I need a table for two people on Friday at 7:45 pm at a cheap italian place.",
         {("restaurant", "people", "2"), ("restaurant", "day", "friday"),
          ("restaurant", "time", "19:45"), ("restaurant", "pricerange", "cheap"),
          ("restaurant", "food", "italian")}),
        ("I'd like a 4-star guesthouse with free wifi and free parking for 3 nights.",
         {("hotel", "stars", "4"), ("hotel", "type", "guesthouse"), ("hotel", "internet", "yes"),
          ("hotel", "parking", "yes"), ("hotel", "stay", "3")}),
        ("Is there a hotel with 4 stars in the north?",
         {("hotel", "stars", "4"), ("hotel", "area", "north"), ("hotel", "type", "hotel")}),
        ("I need a train from Cambridge to London Kings Cross on Sunday that leaves after 10.",
         {("train", "departure", "cambridge"), ("train", "destination", "london kings cross"),
          ("train", "day", "sunday"), ("train", "leaveat", "10:00")}),
        ("I'm going to Ely and need to arrive by 13:30.",
         {("train", "destination", "ely"), ("train", "arriveby", "13:30")}),
        ("I want a train departing Stevenage on tuesday.",
         {("train", "departure", "stevenage"), ("train", "day", "tuesday")}),
        ("Book a moderately priced restaurant in the center of town.",
         {("restaurant", "pricerange", "moderate"), ("restaurant", "area", "centre")}),
        ("I'm looking for the Gonville Hotel.", {("hotel", "name", "gonville hotel")}),
        ("Can you find the acorn guest house?", {("hotel", "name", "acorn guest house")}),
        ("I want to eat at shanghi family restaurant.",
         {("restaurant", "name", "shanghai family restaurant")}),
        ("Any area is fine, but it should be expensive chinese food.",
         {("restaurant", "area", "dontcare"), ("restaurant", "pricerange", "expensive"),
          ("restaurant", "food", "chinese")}),
        ("The price doesn't matter, I just need a place to stay in the east.",
         {("hotel", "pricerange", "dontcare"), ("hotel", "area", "east")}),
    ],
)  # fmt: skip
def test_first_turn_phrases(text: str, want: set[tuple[str, str, str]]) -> None:
    assert triples(text) == want


def test_correction_takes_the_new_value() -> None:
    got = triples("There will be 2 people, not 4.", active="hotel")
    assert got == {("hotel", "people", "2")}
    got = triples("Let's try Friday instead of Monday.", active="restaurant")
    assert got == {("restaurant", "day", "friday")}


def test_short_answers_use_what_the_system_asked() -> None:
    assert triples("5", expected=[("hotel", "people")]) == {("hotel", "people", "5")}
    assert triples("It doesn't matter.", expected=[("restaurant", "area")]) == {
        ("restaurant", "area", "dontcare")
    }
    assert triples("Cambridge, please.", active="train", expected=[("train", "departure")]) == {
        ("train", "departure", "cambridge")
    }


def test_leave_after_versus_arrive_by() -> None:
    got = triples("I want to leave after 8:15 and arrive by 11:00.", active="train")
    assert got == {("train", "leaveat", "08:15"), ("train", "arriveby", "11:00")}


def test_relative_references_resolve_to_the_other_domain() -> None:
    tracker = SlotTracker("test")
    tracker.update("Book a table for 3 people on Saturday at 18:00 at a cheap restaurant.")
    parsed = tracker.update("I also need a train for the same group of people on the same day.")
    assert {("train", "people", "3"), ("train", "day", "saturday")} <= parsed.triples()
    tracker.note_venue("restaurant", {"area": "west", "name": "x"})
    parsed = tracker.update("And a hotel in the same area as the restaurant.")
    assert ("hotel", "area", "west") in parsed.triples()


def test_state_accumulates_and_corrections_overwrite() -> None:
    tracker = SlotTracker("test")
    tracker.update("I need a cheap hotel in the north.")
    tracker.update("Actually, make it moderate.")
    state = tracker.state("hotel").slots
    assert state["pricerange"] == "moderate" and state["area"] == "north"


def test_requests_and_acts() -> None:
    tracker = SlotTracker("test")
    tracker.update("I want a cheap restaurant.")
    parsed = tracker.update(
        "Yes please book it, and give me the phone number, postcode and reference number."
    )
    assert parsed.requests == {"restaurant": ["phone", "postcode", "reference"]}
    assert {"affirm", "book"} <= set(parsed.acts)
    assert {"thank", "bye"} <= set(tracker.parse("No, that's all. Thanks, goodbye!").acts)
    tracker = SlotTracker("test")
    tracker.update("I need a train to Ely.")
    parsed = tracker.update("What is the price and the travel time?")
    assert parsed.requests == {"train": ["price", "duration"]}


def test_unrealistic_values_come_from_its_own_world() -> None:
    got = triples(
        "I am looking for a undefined price range wormhole called winter is coming with on the "
        "river parking with -0.00072 stars with edge internet in the volcano. I want to book it "
        "for 7B people for 6stay nights starting from yesterday.",
        "unrealistic",
    )
    assert got == {
        ("hotel", "pricerange", "undefined"), ("hotel", "type", "wormhole"),
        ("hotel", "name", "winter is coming"), ("hotel", "parking", "on the river"),
        ("hotel", "stars", "-0.00072"), ("hotel", "internet", "edge"),
        ("hotel", "area", "volcano"), ("hotel", "people", "7b"), ("hotel", "stay", "6stay"),
        ("hotel", "day", "yesterday"),
    }  # fmt: skip
    got = triples(
        "I want to book a table for 8GB people on clearday at 00:?? at a yoga restaurant. "
        "I also want a train from volcano to hogwarts on someday for 3^8 people.",
        "unrealistic",
    )
    assert ("restaurant", "people", "8gb") in got
    assert ("restaurant", "time", "00:??") in got
    assert ("train", "departure", "volcano") in got
    assert ("train", "destination", "hogwarts") in got


def test_system_asks() -> None:
    assert system_asks("How many people will be staying?", "hotel") == [("hotel", "people")]
    asks = system_asks("Where will you be departing from, and on what day?", "train")
    assert ("train", "departure") in asks and ("train", "day") in asks
    assert system_asks("The Acorn guest house has free parking.", "hotel") == []


def test_gold_normalisation() -> None:
    vocab = vocabulary("test")
    acts = {"Hotel-Inform": [["bookday", "Friday"], ["name", "gonville"], ["type", "guest house"],
                             ["parking", "free"], ["stars", "do n't care"]],
            "Train-Inform": [["leaveat", "after 9:15"]],
            "general-thank": [["none", "none"]]}  # fmt: skip
    assert gold_triples(acts, vocab) == {
        ("hotel", "day", "friday"), ("hotel", "name", "gonville hotel"),
        ("hotel", "type", "guesthouse"), ("hotel", "parking", "yes"),
        ("hotel", "stars", "dontcare"), ("train", "leaveat", "09:15"),
    }  # fmt: skip
    assert canonical_value("restaurant", "food", "asian", vocab) == "asian oriental"


def test_slot_f1_on_test_corpus_user_turns() -> None:
    scores = evaluate_tracker("test")
    assert scores.turns == 786
    print(f"test: P={scores.precision:.3f} R={scores.recall:.3f} F1={scores.f1:.3f}")
    assert scores.f1 >= 0.924  # the figure before the self-play fixes: they must not lower it
    assert scores.precision >= 0.8 and scores.recall >= 0.8


def test_slot_f1_on_dev_corpus_user_turns() -> None:
    scores = evaluate_tracker("dev")
    print(f"dev: P={scores.precision:.3f} R={scores.recall:.3f} F1={scores.f1:.3f}")
    assert scores.f1 >= 0.925
