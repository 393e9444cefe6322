"""RuleSystem dialogues: corrections, constraints given with booking details, rebooking, train
times and checks of the booked row against everything the user said."""

from __future__ import annotations

from typing import Any

from .test_rule_system import Driver


def queries(d: Driver, domain: str) -> list[dict[str, Any]]:
    return [a for n, a in d.calls if n == f"retrievefrom{domain}db"]


def row_of(d: Driver, domain: str, args: dict[str, Any]) -> dict[str, str]:
    key = "trainid" if domain == "train" else "name"
    return next(r for r in d.db.rows(domain) if r[key] == args[key])


def test_no_earlier_than_is_a_departure_time_and_is_requeried() -> None:
    d = Driver()
    d.say("I need a train from cambridge to norwich on friday.")
    d.say("Leaving no earlier than 17:00 and for 7 people, please. Any time it arrives is fine.")
    last = queries(d, "train")[-1]
    assert last["leaveat"] == {"operator": ">=", "value": "17:00"} and "arriveby" not in last
    [booking] = d.bookings()
    assert booking["leaveat"] >= "17:00" and booking["people"] == "7"


def test_a_correction_to_a_departure_time_after_an_offer() -> None:
    d = Driver()
    d.say("I need a train from kings lynn to cambridge on friday, arriving by 21:15.")
    reply = d.say("Hmm, that's not what I need: I want one departing after 21:15.")
    last = queries(d, "train")[-1]
    assert last["leaveat"]["value"] == "21:15" and "arriveby" not in last
    assert "no train" not in reply.lower()
    d.say("For 2 people.")
    assert d.bookings()[-1]["leaveat"] >= "21:15"


def test_derived_departure_window_never_contradicts_the_user() -> None:
    d = Driver()
    d.say("I need a train from birmingham new street to cambridge on saturday.")
    d.say("I want to arrive by 12:45, 1 ticket please.")
    for q in queries(d, "train"):
        if "leaveat" in q and "arriveby" in q:
            assert q["leaveat"]["value"] < q["arriveby"]["value"]
    [booking] = d.bookings()
    # never the overnight train "arriving" at 02:23
    assert booking["leaveat"] < booking["arriveby"] <= "12:45"


def test_a_type_correction_with_booking_details_is_applied_before_booking() -> None:
    d = Driver()
    d.say("Hi, I'm looking for accommodation with a star rating of 0.")
    assert not d.bookings()
    d.say("Sure: that is a hotel rather than a guesthouse, with free wifi, for a party of 2, for "
          "a stay of 5 nights and from monday.")  # fmt: skip
    [booking] = d.bookings()
    row = row_of(d, "hotel", booking)
    assert (row["type"], row["stars"], row["internet"]) == ("hotel", "0", "yes")


def test_a_constraint_with_booking_details_rechecks_the_offered_row() -> None:
    d = Driver()
    d.say("I want a restaurant in the centre.")
    d.say("It should be expensive and serve british food, for 3 people on tuesday at 13:00.")
    [booking] = d.bookings()
    row = row_of(d, "restaurant", booking)
    assert (row["area"], row["pricerange"], row["food"]) == ("centre", "expensive", "british")


def test_dontcare_removes_a_loose_reading() -> None:
    d = Driver()
    d.say("I need a hotel in the centre with free parking.")
    d.say("The type of place doesn't matter to me.")
    assert "type" not in queries(d, "hotel")[-1]


def test_a_changed_constraint_after_booking_rebooks() -> None:
    d = Driver()
    d.say("I need a moderate guesthouse in the north for 2 people, 3 nights from tuesday.")
    assert row_of(d, "hotel", d.bookings()[0])["parking"] == "yes"
    d.say("Sorry, that booking doesn't fit: it should be one without free parking.")
    _, second = d.bookings()
    assert row_of(d, "hotel", second)["parking"] == "no"
    assert second["people"] == "2" and second["stay"] == "3"


def test_a_repeated_constraint_of_a_booked_domain_is_acknowledged() -> None:
    d = Driver()
    d.say("I need a cheap guesthouse in the north for 2 people, 3 nights from tuesday.")
    reply = d.say("It has to be in the north and cheap.")
    assert len(d.bookings()) == 1
    assert "AB12CD" in reply


def test_rows_with_the_same_name_are_told_apart() -> None:
    d = Driver("unrealistic")
    d.say("I need accommodation where the internet is 45g and named hurricane.")
    d.say("Oh, rated 3^8 stars, for a party of 7B, for a stay of 6stay nights and on daybefore.")
    [booking] = d.bookings()
    assert booking["stars"] == "3^8" and booking["area"] == "earth's core"


def test_a_venue_chosen_on_nothing_the_user_said_needs_a_yes() -> None:
    d = Driver()
    reply = d.say("I need a place to stay for 2 people, 3 nights from monday.")
    assert not d.bookings() and "book" in reply.lower()
    d.say("Yes please.")
    assert len(d.bookings()) == 1


def test_a_train_on_a_day_never_named_is_not_booked_unasked() -> None:
    d = Driver()
    d.say("I need a train from cambridge to london kings cross arriving by 10:15 for 7 people.")
    d.say("Thank you.")
    d.say("Thanks, that is all.")
    assert not d.bookings()


def test_book_it_myself_books_nothing() -> None:
    d = Driver()
    d.say("I need a hotel in the east with 4 stars and free internet.")
    d.say("Let's leave it there, I'll book it myself later. Thank you.")
    assert not d.bookings()


def test_fallback_value_is_tried_when_the_first_finds_nothing() -> None:
    d = Driver()
    reply = d.say("I want an expensive guesthouse. If there is no such place, a cheap one.")
    assert queries(d, "hotel")[-1]["pricerange"] == "cheap"
    assert "as you suggested" in reply


def test_a_named_venue_gives_way_to_a_later_constraint() -> None:
    d = Driver()
    d.say("Can you tell me about the Acorn guest house?")
    d.say("Do you have anything that has a 3 star rating?")
    assert "name" not in queries(d, "hotel")[-1]
    assert queries(d, "hotel")[-1]["stars"] == {"operator": "=", "value": "3"}


def test_dont_mind_removes_a_time_instead_of_guessing_one() -> None:
    d = Driver()
    d.say("I need a train from cambridge to ely on monday arriving by 12:00.")
    d.say("Actually I don't mind about the arrival time. I want to leave after 14:00.")
    last = queries(d, "train")[-1]
    assert "arriveby" not in last and last["leaveat"] == {"operator": ">=", "value": "14:00"}
    d.say("For 2 people.")
    [booking] = d.bookings()
    assert booking["leaveat"] >= "14:00" and booking["people"] == "2"
