"""How the agenda user reads system messages and plans its goal."""

from __future__ import annotations

import pytest

from todeval.benchmarks.booking.tasks import load_tasks
from todeval.benchmarks.booking.users.goal import domain_order, plan_goal, stated_fallbacks
from todeval.benchmarks.booking.users.reading import (
    asked_slots,
    contradictions,
    find_reference,
    read_message,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Your booking is confirmed. Reference number: 8XK2PQ.", "8XK2PQ"),
        ("Booked! Your ref is ab12cd, enjoy.", "AB12CD"),
        ("Reference: QWERTY", "QWERTY"),
        ("ZX81AB is your booking number.", "ZX81AB"),
        ("I booked TR1234 for you; the reference is pending.", None),
        ("The train TR5511 leaves at 10:00.", None),
        ("The postcode is CB21AB.", None),
        ("Your reference number is 7GX2K9 and the postcode is CB21AB.", "7GX2K9"),
        ("Please note the reference number once it arrives.", None),
    ],
)
def test_find_reference(text: str, expected: str | None) -> None:
    assert find_reference(text) == expected


@pytest.mark.parametrize(
    ("text", "domain", "expected"),
    [
        ("What area would you like?", "restaurant", ["area"]),
        ("Do you have a price range in mind?", "hotel", ["pricerange"]),
        ("How many people will be dining, and what time?", "restaurant", ["people", "time"]),
        ("How many nights will you be staying?", "hotel", ["stay"]),
        ("Do you need free parking?", "hotel", ["parking"]),
        ("Where will you be leaving from?", "train", ["departure"]),
        ("Where are you heading to?", "train", ["destination"]),
        ("When would you like to leave?", "train", ["leaveat"]),
        ("What time do you need to arrive?", "train", ["arriveby"]),
        ("How many tickets do you need?", "train", ["people"]),
        ("There are 5 hotels in the north.", "hotel", []),
        ("Please let me know the day of your stay.", "hotel", ["day"]),
    ],
)
def test_asked_slots(text: str, domain: str, expected: list[str]) -> None:
    assert asked_slots(text, domain) == expected


def test_read_message_flags() -> None:
    fail = read_message("I'm sorry, I couldn't find any hotel like that.", "hotel")
    assert fail.failure and not fail.reference
    offer = read_message("How about the acorn guest house? Shall I book it for you?", "hotel")
    assert offer.offers_venue and offer.offers_booking and not offer.failure
    assert read_message("Is there anything else I can help you with?", "hotel").closing
    assert read_message("Which one would you like?", "restaurant").asks_choice
    assert read_message("Your table is booked.", "restaurant").claims_booking
    assert read_message("Sorry, the booking could not be completed.", "hotel").failure
    assert not read_message("There are 12 hotels. Which area?", "hotel").failure


def test_contradictions() -> None:
    vocab = {"area": ["north", "south", "centre"], "pricerange": ["cheap", "expensive"]}
    want = {"area": "north", "pricerange": "cheap"}
    assert contradictions("I found a place in the south.", want, vocab) == ["area"]
    assert contradictions("Options in the north and south.", want, vocab) == []
    assert contradictions("An expensive place in the north.", want, vocab) == ["pricerange"]
    assert contradictions("It has no parking at all.", {"parking": "yes"}, {}) == ["parking"]
    train = {"leaveat": "10:15", "departure": "cambridge", "destination": "ely"}
    assert contradictions("TR1 leaves cambridge at 09:00 for ely.", train, {}) == ["leaveat"]
    assert contradictions("TR1 leaves at 10:30 from cambridge to ely.", train, {}) == []
    swapped = "TR1 leaves ely at 11:00 and arrives in cambridge at 11:20."
    assert contradictions(swapped, train, {}) == ["departure", "destination"]


def test_domain_order_follows_the_goal_message() -> None:
    tasks = {t.task_id.split("/")[1]: t for t in load_tasks("test")}
    assert domain_order(tasks["060-pmul0938"]) == ["restaurant", "train"]  # dict says train first
    # the intro "looking forward to try local restaurants" is not the restaurant request
    assert domain_order(tasks["083-mul0014"]) == ["hotel", "restaurant"]


def test_stated_fallbacks_and_plan() -> None:
    tasks = {t.task_id.split("/")[1]: t for t in load_tasks("test")}
    assert stated_fallbacks(tasks["002-sng1048"]) == {"hotel": {"info"}}
    assert stated_fallbacks(tasks["061-mul0373"]) == {"train": set(), "restaurant": {"book"}}
    (plan,) = plan_goal(tasks["002-sng1048"])
    assert plan.first_info["pricerange"] == "expensive"
    assert plan.info_changes == {"pricerange": "cheap"}
    (plan,) = plan_goal(tasks["031-sng0451"])  # fail_info present, never stated in the message
    assert plan.first_info == plan.final_info
    (plan,) = plan_goal(tasks["031-sng0451"], fallbacks="goal")
    assert plan.first_info != plan.final_info
