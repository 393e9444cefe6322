import random

import pytest

from todeval.benchmarks.booking.db import load_database
from todeval.benchmarks.booking.environment import Booking, BookingEnvironment
from todeval.benchmarks.booking.scoring import score_domain, score_episode, slot_matches
from todeval.benchmarks.booking.tasks import BookingTask, DomainGoal
from todeval.benchmarks.booking.world.of_task_set import world_of


def env(domains: list[str], task_set: str = "test") -> BookingEnvironment:
    return BookingEnvironment(world_of(task_set), domains, random.Random(1))


PIZZA = {
    "name": "pizza hut city centre",
    "area": "centre",
    "food": "italian",
    "pricerange": "cheap",
    "people": "2",
    "day": "friday",
    "time": "19:00",
}


def test_booking_exactly_one_row_gives_reference() -> None:
    e = env(["restaurant"])
    res = e.book("restaurant", PIZZA)
    assert res.ok and res.reference and len(res.reference) == 6
    assert res.reference.isalnum() and res.reference.upper() == res.reference
    booking = e.bookings["restaurant"]
    assert booking.info["name"] == "pizza hut city centre"
    assert booking.book == {"people": "2", "day": "friday", "time": "19:00"}


def test_booking_several_or_no_rows_fails() -> None:
    e = env(["restaurant"])
    several = e.book("restaurant", {**PIZZA, "name": ""})
    assert not several.ok and "missing" in several.message  # name is mandatory
    # without a name the lookup would be ambiguous: check the lookup rule directly
    ambiguous = {k: v for k, v in PIZZA.items() if k != "name"}
    ambiguous["name"] = "dontcare"
    assert not e.book("restaurant", ambiguous).ok
    none = e.book("restaurant", {**PIZZA, "area": "north"})
    assert not none.ok and "no restaurant" in none.message
    assert "restaurant" not in e.bookings


def test_booking_train_by_id_and_time_bounds() -> None:
    e = env(["train"])
    row = load_database("test").query("train", {"trainid": "TR7075", "day": "monday"}).rows[0]
    args = {
        "trainid": "TR7075",
        "day": "monday",
        "departure": row["departure"],
        "destination": row["destination"],
        "leaveat": "04:30",
        "arriveby": "06:00",
        "people": "3",
    }
    res = e.book("train", args)
    assert res.ok, res.message
    assert e.bookings["train"].info["leaveat"] == row["leaveat"]
    several = e.book("train", {**args, "trainid": ""})
    assert not several.ok


def test_booking_domain_and_mandatory_keys_and_values() -> None:
    e = env(["hotel"])
    assert "not available" in e.book("restaurant", PIZZA).message
    e2 = env(["restaurant"])
    missing = {k: v for k, v in PIZZA.items() if k != "time"}
    assert "time" in e2.book("restaurant", missing).message
    bad = e2.book("restaurant", {**PIZZA, "day": "someday"})
    assert not bad.ok and "invalid values" in bad.message


def test_references_come_from_the_episode_rng() -> None:
    a, b = env(["restaurant"]), env(["restaurant"])
    assert a.book("restaurant", PIZZA).reference == b.book("restaurant", PIZZA).reference


def test_slot_matches_fail_values_and_times() -> None:
    assert slot_matches("area", "north", "north")
    assert slot_matches("area", "south", "north", "south")
    assert not slot_matches("area", "east", "north", "south")
    assert slot_matches("leaveat", "10:15", "10:00")
    assert slot_matches("leaveat", "10:00", "10:00")
    assert not slot_matches("leaveat", "09:59", "10:00")
    assert slot_matches("arriveby", "13:00", "13:30")
    assert not slot_matches("arriveby", "13:31", "13:30")
    assert not slot_matches("time", "19:15", "19:00")
    assert not slot_matches("area", None, "north")
    assert slot_matches("leaveat", "1000:1000", "1000:1000")


def _booking(
    domain: str, info: dict[str, str], book: dict[str, str], reqt: dict[str, str] | None = None
) -> Booking:
    return Booking(
        domain=domain, reference="ABC123", info=info, book=book, reqt=reqt or {}, arguments={}
    )


def test_score_domain_inform_book_attributes() -> None:
    goal = DomainGoal(
        info={"area": "north", "pricerange": "cheap"},
        fail_info={"pricerange": "expensive"},
        book={"people": "2", "day": "friday"},
        fail_book={"day": "monday"},
        reqt={"phone": None},
    )
    ok = score_domain(
        goal,
        _booking(
            "hotel",
            {"area": "north", "pricerange": "expensive"},
            {"people": "2", "day": "monday"},
            {"phone": "0122"},
        ),
    )
    assert ok.inform and ok.booked and ok.attributes
    wrong_people = score_domain(
        goal,
        _booking(
            "hotel", {"area": "north", "pricerange": "cheap"}, {"people": "3", "day": "friday"}
        ),
    )
    assert wrong_people.inform and not wrong_people.booked and not wrong_people.attributes
    wrong_area = score_domain(
        goal,
        _booking(
            "hotel", {"area": "south", "pricerange": "cheap"}, {"people": "2", "day": "friday"}
        ),
    )
    assert not wrong_area.inform and not wrong_area.booked
    assert not score_domain(goal, None).inform


def test_score_episode_zero_when_not_completed() -> None:
    task = BookingTask(
        task_id="t/0",
        task_set="test",
        index=0,
        filename="x.json",
        message="",
        dialogue_type="single",
        domains={"hotel": DomainGoal(info={"area": "north"}, book={"people": "2"})},
    )
    bookings = {"hotel": _booking("hotel", {"area": "north"}, {"people": "2"})}
    assert score_episode(task, bookings, completed=True).booking_accuracy == 1.0
    aborted = score_episode(task, bookings, completed=False)
    assert aborted.booking_accuracy == aborted.inform == 0.0
    assert aborted.attributes is None  # no attribute requested: nothing to measure


def test_attributes_not_applicable_without_requests() -> None:
    """A goal that requests no attribute has no attributes score (not a free 1.0): the episode
    leaves the metric out, so its mean and n count only the goals that request one."""
    goal = DomainGoal(info={"area": "north"}, book={"people": "2"})
    assert score_domain(goal, _booking("hotel", {"area": "north"}, {})).attributes  # per domain
    task = BookingTask(
        task_id="t/0", task_set="test", index=0, filename="x.json", message="",
        dialogue_type="single", domains={"hotel": goal},
    )  # fmt: skip
    booked = {"hotel": _booking("hotel", {"area": "north"}, {"people": "2"})}
    for completed in (True, False):
        assert score_episode(task, booked, completed=completed).attributes is None
    asked = task.model_copy(
        update={"domains": {"hotel": goal.model_copy(update={"reqt": {"phone": None}})}}
    )
    assert score_episode(asked, booked, completed=True).attributes == 0.0
    assert score_episode(asked, booked, completed=False).attributes == 0.0
    told = {"hotel": _booking("hotel", {"area": "north"}, {"people": "2"}, {"phone": "0122"})}
    assert score_episode(asked, told, completed=True).attributes == 1.0


@pytest.mark.parametrize("stay", ["0", "3.75", "8seasons"])
def test_unrealistic_values_accepted_in_their_own_schema(stay: str) -> None:
    e = env(["hotel"], "unrealistic")
    row = load_database("unrealistic").rows("hotel")[0]
    args = {
        k: row[k] for k in ("area", "pricerange", "type", "name", "internet", "parking", "stars")
    }
    res = e.book("hotel", {**args, "people": "7b", "day": "clearday", "stay": stay})
    assert res.ok, res.message
