"""The rule tracker on phrasings met in self-play (agenda, corpus) and written like an LLM user."""

from __future__ import annotations

import pytest

from todeval.benchmarks.booking.systems import SlotTracker

Triple = tuple[str, str, str]


def read(
    text: str, task_set: str = "test", active: str | None = None, **known: dict[str, str]
) -> set[Triple]:
    tracker = SlotTracker(task_set)
    tracker.active = active
    for domain, row in known.items():
        tracker.note_venue(domain, row)
    return tracker.parse(text).triples()


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("Leaving no earlier than 20:30 and for 5 people, please.", "leaveat", "20:30"),
        ("I want one departing after 21:15. Do you have another?", "leaveat", "21:15"),
        ("That leaves after 13:00, please.", "leaveat", "13:00"),
        ("Not before 9 am, please.", "leaveat", "09:00"),
        ("It needs to depart at 9:00 at the earliest.", "leaveat", "09:00"),
        ("Something departing from 10:00 onwards would be ideal.", "leaveat", "10:00"),
        ("Arriving no later than 09:15 and for a party of 5.", "arriveby", "09:15"),
        ("I'd like to arrive at 11:00 at the latest.", "arriveby", "11:00"),
        ("Preferably not after 16:00 arrival.", "arriveby", "16:00"),
        ("Whichever gets me there closest to 12:45 please.", "arriveby", "12:45"),
        ("Getting there by 10:15, please.", "arriveby", "10:15"),
    ],
)
def test_leave_and_arrive_cues(text: str, slot: str, value: str) -> None:
    got = read(text, active="train")
    assert ("train", slot, value) in got
    other = "arriveby" if slot == "leaveat" else "leaveat"
    assert not any(s == other and v != "dontcare" for _, s, v in got)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("Any time it arrives is fine.", "arriveby"),
        ("I don't mind about the time it leaves.", "leaveat"),
        ("The time it arrives doesn't matter to me.", "arriveby"),
        ("I have no preference for the departure time.", "leaveat"),
    ],
)
def test_indifference_to_a_train_time_is_dontcare_and_no_request(text: str, slot: str) -> None:
    tracker = SlotTracker("test")
    tracker.active = "train"
    parsed = tracker.parse(text)
    assert ("train", slot, "dontcare") in parsed.triples()
    assert not parsed.requests  # "the departure time doesn't matter" asks for nothing


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("That is a hotel rather than a guesthouse, for 2 people.", "hotel"),
        ("On the west side of town, of the hotel type, rated 4 stars.", "hotel"),
        ("I need somewhere to stay that is a proper hotel, not a guesthouse.", "hotel"),
        ("How about a place in the east that is a hotel not a guesthouse", "hotel"),
        ("I'd rather not stay in a guesthouse.", "hotel"),
        ("I'd rather stay in a proper hotel than a guesthouse.", "hotel"),
        ("I want a guesthouse rather than a hotel.", "guesthouse"),
        ("Either a hotel or a guesthouse is fine.", "dontcare"),
        ("The kind of accommodation doesn't matter to me, I didn't ask for one.", "dontcare"),
    ],
)
def test_hotel_type_corrections(text: str, value: str) -> None:
    got = read(text, active="hotel")
    assert {t for t in got if t[1] == "type"} == {("hotel", "type", value)}


def test_a_loose_hotel_reading_loses_to_an_explicit_dontcare() -> None:
    got = read("I need a hotel. I don't mind about the type of place.")
    assert ("hotel", "type", "dontcare") in got
    tracker = SlotTracker("test")
    tracker.update("The type of place doesn't matter to me.")
    tracker.update("I'm looking for a hotel with free parking.")
    assert tracker.state("hotel").slots["type"] == "dontcare"


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("Please book seats for me and my two colleagues.", "3"),
        ("It's for me, my husband and our 3 children.", "5"),
        ("I'm travelling with my wife and 2 kids.", "4"),
        ("It's me and me mum.", "2"),
        ("Could you just change the number of people in my party to 5?", "5"),
        ("Book it for one please.", "1"),
        ("Yes please. Book it for 3 nights. I'm traveling solo so just make it for 1.", "1"),
    ],
)
def test_party_sizes(text: str, people: str) -> None:
    got = read(text, active="hotel")
    assert ("hotel", "people", people) in got


@pytest.mark.parametrize(
    "text",
    [
        "The type of place doesn't matter to me, I didn't ask for one.",
        "Sorry, that booking doesn't fit: it should be one without free parking.",
        "I'm looking for one with free parking.",
    ],
)
def test_one_as_a_pronoun_is_no_party_size(text: str) -> None:
    assert not any(s == "people" for _, s, _v in read(text, active="hotel"))


def test_a_fallback_value_is_kept_aside() -> None:
    tracker = SlotTracker("test")
    tracker.active = "hotel"
    parsed = tracker.update("I need 3 nights from Tuesday. If 3 nights is not available try 2.")
    assert ("hotel", "stay", "3") in parsed.triples()
    parsed = tracker.update("Moderate please. If that isn't available though I can do expensive.")
    assert tracker.state("hotel").slots["pricerange"] == "moderate"
    assert tracker.state("hotel").fallback == {"pricerange": "expensive"}


@pytest.mark.parametrize(
    ("text", "offered", "want"),
    [
        ("Is there anything cheaper?", "expensive", "moderate"),
        ("It's too expensive.", "moderate", "cheap"),
        ("Do you have something a bit fancier?", "cheap", "moderate"),
    ],
)
def test_relative_price(text: str, offered: str, want: str) -> None:
    got = read(text, active="hotel", hotel={"name": "x", "pricerange": offered})
    assert {t for t in got if t[1] == "pricerange"} == {("hotel", "pricerange", want)}


def test_comparing_the_offered_options_sets_no_price() -> None:
    got = read("Which one is cheaper?", active="hotel", hotel={"name": "x", "pricerange": "cheap"})
    assert not got


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("Parking is optional.", "parking", "dontcare"),
        ("It doesn't need to include internet, but it should have free parking.", "internet",
         "dontcare"),
        ("What I want is a hotel that does not offer free parking.", "parking", "no"),
        ("I need a place with free wifi, price range is flexible.", "pricerange", "dontcare"),
        ("I'm flexible on the area.", "area", "dontcare"),
    ],
)  # fmt: skip
def test_features_and_flexibility(text: str, slot: str, value: str) -> None:
    assert ("hotel", slot, value) in read(text, active="hotel")


def test_book_it_myself_is_no_booking_request() -> None:
    tracker = SlotTracker("test")
    assert "book" not in tracker.parse("Let's leave it there, I'll book it myself later.").acts
    assert "affirm" not in tracker.parse("That one is a bit too expensive.").acts


def test_a_named_venue_after_a_comma() -> None:
    got = read("Also need to book a hotel, the autumn house for 2 people, 2 nights from Tuesday.")
    assert ("hotel", "name", "autumn house") in got


def test_the_answer_goes_to_the_open_domain_the_system_asked_about() -> None:
    tracker = SlotTracker("test")
    tracker.update("I need a cheap indian restaurant in the centre.")
    tracker.update("I also need a cheap guesthouse.")
    tracker.closed = {"restaurant"}
    tracker.expect([("hotel", "people"), ("hotel", "day")])
    parsed = tracker.update("The same two I'm taking to the restaurant, so there are three of us.")
    assert ("hotel", "people", "3") in parsed.triples()


def test_the_same_group_before_its_size_is_known() -> None:
    tracker = SlotTracker("test")
    tracker.update("I need a train from cambridge to ely on monday.")
    tracker.update("And a cheap restaurant in the centre for the same group of people at 12:30.")
    assert "people" not in tracker.state("restaurant").slots
    tracker.update("Five people.")
    assert tracker.state("restaurant").slots["people"] == "5"
    assert tracker.state("train").slots["people"] == "5"


def test_a_later_leave_time_drops_an_impossible_arrival_time() -> None:
    tracker = SlotTracker("test")
    tracker.update("I need a train from cambridge to ely on monday arriving by 20:30.")
    tracker.update("Sorry, I meant leaving after 20:30.")
    slots = tracker.state("train").slots
    assert slots["leaveat"] == "20:30" and "arriveby" not in slots


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Oh, for a party of 488976, on rainyday and for 1e4:30.", "1e4:30"),
        ("For a group of 0, for someday and for 1000:1000.", "1000:1000"),
        ("Sure: for 8GB people, for rainyday and at 2 8:7 6.", "2 8:7 6"),
        ("Oh, at ??:00.", "??:00"),
    ],
)
def test_unrealistic_table_times(text: str, value: str) -> None:
    got = read(text, "unrealistic", active="restaurant")
    assert {t for t in got if t[1] == "time"} == {("restaurant", "time", value)}


def test_unrealistic_time_question_mark_and_no_false_time() -> None:
    got = read("Can you help me find train tickets departing after 00:00?", "unrealistic")
    assert ("train", "leaveat", "00:00") in got
    got = read("Sorry, that won't work for me: I want one named saveme.", "unrealistic",
               active="restaurant")  # fmt: skip
    assert not any(s == "time" for _, s, _v in got)
