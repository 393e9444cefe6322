"""Hand-made cases for every Inform/Success rule, on a tiny venue database."""

from __future__ import annotations

from typing import Any

import pytest

from todeval.scoring.multiwoz._corpus import DomainGoal
from todeval.scoring.multiwoz._database import VenueDatabase
from todeval.scoring.multiwoz._normalize import State
from todeval.scoring.multiwoz._success import score_dialogue

ROWS: dict[str, list[dict[str, Any]]] = {
    "restaurant": [
        {"id": "r1", "name": "pizza hut city centre", "food": "italian", "area": "centre",
         "pricerange": "cheap", "phone": "1", "type": "restaurant"},
        {"id": "r2", "name": "golden wok", "food": "chinese", "area": "north",
         "pricerange": "moderate", "phone": "2", "type": "restaurant"},
        {"id": "r3", "name": "curry garden", "food": "indian", "area": "centre",
         "pricerange": "expensive", "phone": "3", "type": "restaurant"},
        {"id": "r4", "name": "yu garden", "food": "chinese", "area": "east",
         "pricerange": "expensive", "phone": "4", "type": "restaurant"},
    ],
    "hotel": [
        {"id": "h1", "name": "acorn guest house", "area": "north", "type": "guesthouse",
         "parking": "yes", "internet": "yes", "stars": "4", "pricerange": "moderate"},
        {"id": "h2", "name": "gonville hotel", "area": "centre", "type": "hotel",
         "parking": "yes", "internet": "yes", "stars": "3", "pricerange": "expensive"},
    ],
    "attraction": [
        {"id": "a1", "name": "cherry hinton village centre", "area": "east",
         "type": "mutliple sports", "entrance fee": "?", "pricerange": "?"},
        {"id": "a2", "name": "adc theatre", "area": "centre", "type": "theatre",
         "entrance fee": "?", "pricerange": "?"},
    ],
    "train": [
        {"trainID": "TR1", "departure": "cambridge", "destination": "london kings cross",
         "day": "monday", "leaveAt": "05:00", "arriveBy": "05:51", "price": "1",
         "duration": "51 minutes"},
        {"trainID": "TR2", "departure": "cambridge", "destination": "london kings cross",
         "day": "monday", "leaveAt": "09:00", "arriveBy": "09:51", "price": "1",
         "duration": "51 minutes"},
        {"trainID": "TR3", "departure": "cambridge", "destination": "london kings cross",
         "day": "monday", "leaveAt": "17:00", "arriveBy": "17:51", "price": "1",
         "duration": "51 minutes"},
        {"trainID": "TR4", "departure": "cambridge", "destination": "ely",
         "day": "monday", "leaveAt": "10:00", "arriveBy": "10:20", "price": "1",
         "duration": "20 minutes"},
    ],
}  # fmt: skip


@pytest.fixture
def db() -> VenueDatabase:
    return VenueDatabase(tables=ROWS)


def goal(informable: dict[str, str], requestable: set[str] | None = None) -> DomainGoal:
    return DomainGoal(informable=informable, requestable=frozenset(requestable or set()))


def run(
    db: VenueDatabase,
    goals: dict[str, DomainGoal],
    turns: list[tuple[str, State, list[str]]],
    booked: list[set[str]] | None = None,
) -> Any:
    booked_sets = [frozenset(b) for b in (booked or [set()] * len(turns))]
    return score_dialogue(
        goals,
        booked_sets,
        [t[0] for t in turns],
        [t[1] for t in turns],
        [t[2] for t in turns],
        db,
    )


# --- database query ---------------------------------------------------------------------


def test_query_exact_and_fuzzy_columns(db: VenueDatabase) -> None:
    assert db.query("restaurant", {"food": "chinese"}) == {"r2", "r4"}
    assert db.query("restaurant", {"food": "chinese", "area": "east"}) == {"r4"}
    # fuzzy: a near spelling of a name still matches (partial ratio >= 90) ...
    assert db.query("restaurant", {"name": "pizza hut city center"}) == {"r1"}
    # ... but 'yu garden' vs 'curry garden' scores 89 with the standard evaluator's ratio
    assert db.query("restaurant", {"name": "yu garden"}) == {"r4"}
    # rapidfuzz's optimal partial ratio would give 90 for these two; the evaluator's gives 86
    assert db.query("attraction", {"name": "mumford theatre"}) == frozenset()


def test_query_skips_dontcare_and_unknown_cells(db: VenueDatabase) -> None:
    assert db.query("restaurant", {"food": "dontcare"}) == {"r1", "r2", "r3", "r4"}
    assert db.query("restaurant", {"food": "do n't care", "area": "centre"}) == {"r1", "r3"}
    # '?' in the database passes any constraint on that column
    assert db.query("attraction", {"pricerange": "cheap"}) == {"a1", "a2"}
    # slots that are not database columns are ignored
    assert db.query("restaurant", {"people": "4", "area": "north"}) == {"r2"}


def test_query_normalises_values_and_repairs_the_type_typo(db: VenueDatabase) -> None:
    assert db.query("hotel", {"type": "guest house"}) == {"h1"}
    assert db.query("hotel", {"parking": "free", "area": "centre"}) == {"h2"}
    assert db.query("attraction", {"type": "multiple sports"}) == {"a1"}
    assert db.query("attraction", {"type": "mutliple sports"}) == {"a1"}


def test_query_time_comparisons(db: VenueDatabase) -> None:
    cam = {"departure": "cambridge", "destination": "london kings cross", "day": "monday"}
    # arrive keeps trains arriving at or before the constraint
    assert db.query("train", {**cam, "arrive": "09:51"}) == {"TR1", "TR2"}
    assert db.query("train", {**cam, "arrive": "09:50"}) == {"TR1"}
    # leave keeps trains leaving at or after it
    assert db.query("train", {**cam, "leave": "09:00"}) == {"TR2", "TR3"}
    assert db.query("train", {**cam, "leave": "5:30 pm"}) == frozenset()
    assert db.query("train", {**cam, "leave": "after 4 pm"}) == {"TR3"}
    assert db.query("train", {**cam, "leave": "1000"}) == {"TR3"}
    # an unparsable time counts as 00:00: leave keeps everything, arrive keeps nothing
    assert db.query("train", {**cam, "leave": "soonish"}) == {"TR1", "TR2", "TR3"}
    assert db.query("train", {**cam, "arrive": "soonish"}) == frozenset()


def test_query_is_memoised(db: VenueDatabase) -> None:
    first = db.query("restaurant", {"area": "centre"})
    assert db.query("restaurant", {"area": "centre"}) is first


def test_query_unknown_domain_is_empty(db: VenueDatabase) -> None:
    assert db.query("taxi", {"leave": "10:00"}) == frozenset()
    assert db.query("police", {}) == frozenset()


# --- offers and Inform --------------------------------------------------------------------


def test_offer_matching_goal_gives_inform(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "chinese", "area": "east"}, {"PHONE"})}
    state = {"restaurant": {"food": "chinese", "area": "east"}}
    out = run(db, goals, [("NAME is nice, phone PHONE", state, ["restaurant"])])
    assert out.inform == {"restaurant": True}
    assert out.success == {"restaurant": True}
    assert out.offered["restaurant"] == {"r4"}


def test_offer_wider_than_goal_fails_inform(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "chinese", "area": "east"})}
    state = {"restaurant": {"food": "chinese"}}  # offers r2 and r4; the goal allows only r4
    out = run(db, goals, [("how about NAME?", state, ["restaurant"])])
    assert out.inform == {"restaurant": False}
    assert not out.success_total


def test_nothing_offered_fails_inform(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "chinese"})}
    out = run(db, goals, [("what area?", {"restaurant": {"food": "chinese"}}, ["restaurant"])])
    assert out.inform == {"restaurant": False}


def test_offered_venue_replacement(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "chinese", "area": "east"})}
    wide = {"restaurant": {"food": "chinese"}}  # r2, r4
    narrow = {"restaurant": {"food": "chinese", "area": "east"}}  # r4
    other = {"restaurant": {"food": "indian"}}  # r3
    # a later offer replaces the earlier one when an earlier venue is not among its matches
    out = run(db, goals, [("NAME", wide, ["restaurant"]), ("NAME", narrow, ["restaurant"])])
    assert out.offered["restaurant"] == {"r4"} and out.inform["restaurant"]
    # ... but is ignored when it still contains every earlier venue
    out = run(db, goals, [("NAME", narrow, ["restaurant"]), ("NAME", wide, ["restaurant"])])
    assert out.offered["restaurant"] == {"r4"} and out.inform["restaurant"]
    # a different venue later replaces the right one: the last offer counts
    out = run(db, goals, [("NAME", narrow, ["restaurant"]), ("NAME", other, ["restaurant"])])
    assert out.offered["restaurant"] == {"r3"} and not out.inform["restaurant"]
    # an offer with no matches replaces too (the state lost the domain)
    out = run(db, goals, [("NAME", narrow, ["restaurant"]), ("NAME", {}, ["restaurant"])])
    assert out.offered["restaurant"] == frozenset() and not out.inform["restaurant"]


def test_offers_count_only_in_active_domains(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "chinese", "area": "east"}, {"PHONE"})}
    state = {"restaurant": {"food": "chinese", "area": "east"}}
    out = run(db, goals, [("NAME, phone PHONE", state, ["hotel"])])
    assert out.inform == {"restaurant": False}
    assert out.provided["restaurant"] == frozenset()


def test_goal_with_venue_name_is_matched_automatically(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"name": "golden wok"}, {"PHONE"})}
    out = run(db, goals, [("the phone is PHONE", {}, ["restaurant"])])
    assert out.inform == {"restaurant": True} and out.success_total


def test_fuzzy_name_in_state(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "italian", "area": "centre"})}
    state = {"restaurant": {"name": "pizza hut city center"}}
    out = run(db, goals, [("NAME is there", state, ["restaurant"])])
    assert out.offered["restaurant"] == {"r1"} and out.inform_total


# --- requestables and Success -------------------------------------------------------------


def test_requestables_need_their_placeholder(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "indian"}, {"PHONE", "POST", "ADDRESS"})}
    state = {"restaurant": {"food": "indian"}}
    out = run(
        db,
        goals,
        [("NAME at ADDRESS", state, ["restaurant"]), ("call PHONE", state, ["restaurant"])],
    )
    assert out.inform_total
    assert out.provided["restaurant"] == {"PHONE", "ADDRESS"}
    assert out.success == {"restaurant": False}


def test_reference_only_counts_when_booked(db: VenueDatabase) -> None:
    goals = {"hotel": goal({"area": "north", "type": "guesthouse"}, {"REFERENCE"})}
    state = {"hotel": {"area": "north", "type": "guesthouse"}}
    turns = [("NAME, ref REFERENCE", state, ["hotel"]), ("ref REFERENCE", state, ["hotel"])]
    not_booked = run(db, goals, turns, booked=[set(), set()])
    assert "REFERENCE" not in not_booked.provided["hotel"]
    assert not not_booked.success_total
    booked_later = run(db, goals, turns, booked=[set(), {"hotel"}])
    assert "REFERENCE" in booked_later.provided["hotel"]
    assert booked_later.success_total
    other_domain_booked = run(db, goals, turns, booked=[{"train"}, {"train"}])
    assert not other_domain_booked.success_total


def test_success_needs_inform_in_every_domain(db: VenueDatabase) -> None:
    goals = {
        "restaurant": goal({"food": "indian"}, {"PHONE"}),
        "hotel": goal({"area": "centre"}, {"PHONE"}),
    }
    turns = [
        ("NAME, PHONE", {"restaurant": {"food": "indian"}}, ["restaurant"]),
        ("NAME, PHONE", {"hotel": {"area": "north"}}, ["hotel"]),  # wrong hotel
    ]
    out = run(db, goals, turns)
    assert out.inform == {"restaurant": True, "hotel": False}
    assert out.success == {"restaurant": False, "hotel": False}
    assert not out.success_total


def test_taxi_police_hospital_need_no_venue(db: VenueDatabase) -> None:
    goals = {
        "taxi": goal({"leave": "10:00"}, {"PHONE"}),
        "police": goal({}, {"ADDRESS"}),
        "hospital": goal({"department": "paediatrics"}, set()),
    }
    out = run(db, goals, [("hello", {}, [])])
    assert out.inform == {"taxi": True, "police": True, "hospital": True}
    assert out.success == {"taxi": False, "police": False, "hospital": True}
    out = run(db, goals, [("car TYPE, PHONE", {}, ["taxi"]), ("at ADDRESS", {}, ["police"])])
    assert out.success_total


def test_train_without_trainid_request(db: VenueDatabase) -> None:
    info = {"departure": "cambridge", "destination": "ely", "day": "monday"}
    state = {"train": dict(info)}
    # nothing offered and TRAINID not requested: matched
    out = run(db, {"train": goal(info, {"REFERENCE"})}, [("when?", state, ["train"])])
    assert out.inform == {"train": True}
    # nothing offered but TRAINID requested: not matched
    out = run(db, {"train": goal(info, {"TRAINID"})}, [("when?", state, ["train"])])
    assert out.inform == {"train": False}
    # a train offered that does not fit the goal: not matched even without TRAINID requested
    london = {"train": {"departure": "cambridge", "destination": "london kings cross"}}
    out = run(db, {"train": goal(info, set())}, [("TRAINID leaves", london, ["train"])])
    assert out.inform == {"train": False}
    # the right train offered: matched, and TRAINID provided
    out = run(db, {"train": goal(info, {"TRAINID"})}, [("TRAINID leaves", state, ["train"])])
    assert out.inform_total and out.success_total


def test_train_offer_needs_trainid_not_name(db: VenueDatabase) -> None:
    info = {"departure": "cambridge", "destination": "ely"}
    out = run(db, {"train": goal(info, {"TRAINID"})}, [("NAME", {"train": info}, ["train"])])
    assert out.inform == {"train": False}


def test_missing_turns_score_on_what_is_given(db: VenueDatabase) -> None:
    goals = {"restaurant": goal({"food": "indian"}, {"PHONE"})}
    state = {"restaurant": {"food": "indian"}}
    # three booked-domain entries (the test set has three turns) but only one turn given
    out = score_dialogue(
        goals,
        [frozenset(), frozenset(), frozenset()],
        ["NAME, PHONE"],
        [state],
        [["restaurant"]],
        db,
    )
    assert out.success_total
