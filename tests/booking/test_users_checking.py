"""How the agenda user checks what a system said: contradictions, misread searches, booking
details, and what it remembers about each venue."""

from __future__ import annotations

from todeval.benchmarks.booking.users.checking import (
    booking_mismatches,
    contradictions,
    misreadings,
    says_something,
)
from todeval.benchmarks.booking.users.reading import asked_slots
from todeval.benchmarks.booking.users.venues import VenueNotes

HOTEL = {
    "area": ["centre", "north", "south", "east", "west"],
    "pricerange": ["cheap", "moderate", "expensive"],
    "type": ["hotel", "guesthouse"],
    "stars": ["0", "1", "2", "3", "4", "5"],
    "name": ["a and b guest house", "alpha-milton guest house", "gonville hotel"],
}
TRAIN = {
    "day": ["monday", "thursday", "friday"],
    "station": ["cambridge", "ely", "kings lynn", "norwich"],
}
OFFER = (
    "There are 21 matches. How about a and b guest house, a moderately priced 4-star "
    "guesthouse in the east with free wifi? For the reservation, can you tell me how many "
    "people will stay, which day you arrive and how many nights?"
)


def test_an_offer_is_checked_against_every_constraint_given() -> None:
    want = {"type": "guesthouse", "pricerange": "cheap", "stars": "4"}
    assert contradictions(OFFER, want, HOTEL) == ["pricerange"]
    want = {"type": "hotel", "area": "east", "stars": "4"}
    assert contradictions(OFFER, want, HOTEL) == ["type"]
    assert contradictions(OFFER, {"pricerange": "moderate", "internet": "yes"}, HOTEL) == []


def test_types_come_from_descriptions_not_from_venue_names() -> None:
    names = HOTEL["name"]
    # synthetic data: a venue called "... guest house" can be of type hotel
    text = "How about alpha-milton guest house, a cheap 2-star hotel?"
    assert contradictions(text, {"type": "hotel"}, HOTEL, names) == []
    assert contradictions(text, {"type": "guesthouse"}, HOTEL, names) == ["type"]
    # the generic word is not a description
    generic = "I can reserve a room at the hotel for you."
    assert contradictions(generic, {"type": "guesthouse"}, HOTEL, names) == []
    # a name that contains an area says nothing about the area
    assert (
        contradictions(
            "How about pizza hut city centre?", {"area": "north"}, HOTEL, ["pizza hut city centre"]
        )
        == []
    )


def test_facilities_and_price_wordings() -> None:
    assert contradictions("It has no free parking.", {"parking": "yes"}, HOTEL) == ["parking"]
    assert contradictions("It offers free parking.", {"parking": "no"}, HOTEL) == ["parking"]
    question = "Do you want one with or without free parking?"
    assert contradictions(question, {"parking": "yes"}, HOTEL) == []
    inexpensive = "The acorn is an inexpensive place in the north."
    assert contradictions(inexpensive, {"pricerange": "cheap"}, HOTEL) == []
    assert contradictions(inexpensive, {"pricerange": "expensive"}, HOTEL) == ["pricerange"]


def test_train_times_and_stations() -> None:
    want = {"leaveat": "17:00", "departure": "cambridge", "destination": "norwich"}
    booked = "I have booked 7 tickets on TR7747 from cambridge to norwich, leaving at 15:36."
    assert contradictions(booked, want, TRAIN) == ["leaveat"]
    elsewhere = "How about TR1111 from ely to norwich, leaving at 18:00?"
    assert contradictions(elsewhere, want, TRAIN) == ["departure"]
    fine = "How about TR2222 from cambridge to norwich, leaving at 17:36?"
    assert contradictions(fine, want, TRAIN) == []


def test_misreadings_of_a_failed_search() -> None:
    failure = (
        "I'm sorry, there is no train from cambridge to ely on monday leaving after 12:00 "
        "arriving by 12:00 in my database."
    )
    want = {"leaveat": "12:00", "departure": "cambridge", "destination": "ely", "day": "monday"}
    slots = ["departure", "destination", "day", "leaveat", "arriveby"]
    assert misreadings(failure, want, slots, TRAIN) == {"arriveby": None}
    wrong_day = "There is no train from cambridge to ely on friday leaving after 12:00."
    assert misreadings(wrong_day, want, slots, TRAIN) == {"day": "monday"}
    hotel = "I couldn't find a 4-star guesthouse in the west."
    got = misreadings(hotel, {"area": "west"}, ["area", "stars", "type"], HOTEL)
    assert got == {"stars": None, "type": None}


def test_booking_details_echoed_by_the_system() -> None:
    days = ["monday", "saturday", "thursday"]
    want = {"people": ["5"], "day": ["saturday"], "stay": ["2"]}
    one = "I have booked the lensfield hotel for 1 person, 2 nights from saturday. Ref ZRIHQP."
    assert booking_mismatches(one, want, days) == ["people"]
    five = "I have booked the lensfield hotel for five people, 2 nights from saturday."
    assert booking_mismatches(five, want, days) == []
    question = "How many people will stay, which day and how many nights?"
    assert booking_mismatches(question, want, days) == []
    table = {"people": ["7"], "time": ["15:00", "14:00"], "day": ["thursday"]}
    said = "I have booked a table for 7 at curry garden on thursday at 14:00."
    assert booking_mismatches(said, table, days) == []
    odd = {"people": ["7b"], "day": ["clearday"]}
    assert booking_mismatches("Booked for 7B people on clearday.", odd, ["clearday"]) == []


def test_says_something() -> None:
    assert says_something(OFFER, "pricerange", "cheap", HOTEL)
    assert says_something(OFFER, "type", "hotel", HOTEL)
    assert not says_something(OFFER, "parking", "yes", HOTEL)
    assert not says_something("I have booked it for you.", "area", "east", HOTEL)


def test_proposals_and_stated_times_are_not_questions() -> None:
    offer = (
        "How about TR7518 from cambridge to ely on saturday, leaving at 05:29 and arriving at "
        "06:07? For the reservation, can you tell me how many tickets you need?"
    )
    assert asked_slots(offer, "train") == ["people"]
    assert asked_slots(OFFER, "hotel") == ["people", "stay", "day"]
    assert asked_slots("Would you like to leave after 10:00?", "train") == []
    assert asked_slots("When would you like to leave?", "train") == ["leaveat"]


def test_venue_notes_link_a_booking_to_the_offer() -> None:
    notes = VenueNotes(HOTEL["name"])
    notes.remember(OFFER)
    booked = "I have booked a and b guest house for 8 people. Your reference number is 40Y25L."
    now, earlier = notes.evidence(booked)
    assert "40Y25L" in now and "moderately priced" in earlier
    # a message naming no venue is about the venue discussed last
    assert "moderately priced" in notes.evidence("Shall I book it?")[1]
    # failure sentences describe the search, not the venue
    notes.remember("There is nothing in the west without parking. Gonville hotel is close.")
    assert "parking" not in notes.evidence("Gonville hotel is booked.")[1]
