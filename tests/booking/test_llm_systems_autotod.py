"""The AutoTOD-style system: SQL WHERE translation and episodes through the game master."""

from __future__ import annotations

from typing import Any

import pytest

from todeval.benchmarks.booking.llm_systems.autotod import AutoTODSystem
from todeval.benchmarks.booking.llm_systems.sql import (
    SqlWhereError,
    parse_conditions,
    where_to_arguments,
)
from todeval.benchmarks.booking.schema import tool_parameters
from todeval.core.outcome import Outcome

from .test_llm_systems_support import (
    BOOKING,
    Recorder,
    events,
    options,
    play,
    sequence,
    text,
    tool,
)

HOTEL = tool_parameters("test")["retrievefromhoteldb"]
TRAIN = tool_parameters("test")["retrievefromtraindb"]


@pytest.mark.parametrize(
    ("where", "params", "expected"),
    [
        ("area = 'north' AND stars >= '4'", HOTEL, {
            "area": "north", "stars": {"operator": ">=", "value": "4"}}),
        ("WHERE name = 'City Centre North B and B';", HOTEL, {
            "name": "city centre north b and b"}),
        ("type='guesthouse' and parking = \"yes\" AND stars = 3", HOTEL, {
            "type": "guesthouse", "parking": "yes", "stars": {"operator": "=", "value": "3"}}),
        ("departure = 'cambridge' AND day = 'friday' AND leaveat > '09:15'", TRAIN, {
            "departure": "cambridge", "day": "friday",
            "leaveat": {"operator": ">", "value": "09:15"}}),
        ("name = 'rosa''s bed and breakfast'", HOTEL, {"name": "rosa's bed and breakfast"}),
        ("arriveby <= 17:30", TRAIN, {"arriveby": {"operator": "<=", "value": "17:30"}}),
        ("", HOTEL, {}),
        ("1=1", HOTEL, {}),
    ],
)  # fmt: skip
def test_where_translation(where: str, params: dict[str, Any], expected: dict[str, Any]) -> None:
    assert where_to_arguments(where, params) == expected


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("area = 'north' OR area = 'south'", "only AND"),
        ("colour = 'red'", "unknown column"),
        ("area >= 'north'", "only be compared with ="),
        ("name LIKE '%b and b%'", "cannot parse"),
        ("(area = 'north')", "cannot parse"),
        ("stars >= '3' AND stars <= '4'", "twice"),
        ("area = 'north' AND", "cannot parse"),
        ("area = 'north", "cannot parse"),
    ],
)
def test_where_translation_rejects(where: str, message: str) -> None:
    with pytest.raises(SqlWhereError, match=message):
        where_to_arguments(where, HOTEL)


def test_parse_conditions_normalises_operators() -> None:
    assert parse_conditions("stars == '4'") == [("stars", "=", "4")]


GOOD = [
    tool("query_hotels", {"sql_where": "name = 'city centre north b and b'"}),
    text("I found city centre north b and b. How many people, which day, how many nights?"),
    tool("validatehotelbooking", BOOKING),
    text("Your booking is confirmed."),
]


def test_good_agent_books_task_0() -> None:
    recorder = Recorder(sequence(GOOD))
    record = play(AutoTODSystem.from_options(options(recorder.backend)))
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert events(record, "db_query")[0]["arguments"] == {"name": "city centre north b and b"}
    assert events(record, "system_message")[0]["text"].startswith("I found city centre")
    assert record.usage["system"].calls == 4
    names = {t["function"]["name"] for t in recorder.requests[0].tools or []}
    assert names == {
        "followup",
        "query_restaurants",
        "query_hotels",
        "query_trains",
        "validaterestaurantbooking",
        "validatehotelbooking",
        "validatetrainbooking",
    }
    # the DB rows come back as the query tool's result
    answer = recorder.requests[1].messages[-1]
    assert answer.role == "tool" and answer.name == "query_hotels"
    assert '"name":"city centre north b and b"' in (answer.content or "")


def test_untranslatable_query_is_a_violation_with_the_sql_kept() -> None:
    where = "name LIKE '%north%'"
    recorder = Recorder(sequence([tool("query_hotels", {"sql_where": where})]))
    record = play(AutoTODSystem.from_options(options(recorder.backend)))
    assert record.outcome is Outcome.ABORTED
    (violation,) = record.details["violations"]
    assert violation["reason"].startswith("arguments are not valid JSON")
    assert violation["raw"].startswith(f"retrievefromhoteldb(WHERE {where} /* cannot parse")


def test_malformed_query_arguments_are_a_violation() -> None:
    recorder = Recorder(sequence([tool("query_trains", {"where": "day = 'friday'"})]))
    record = play(AutoTODSystem.from_options(options(recorder.backend)))
    assert record.outcome is Outcome.ABORTED
    assert "malformed arguments" in record.details["violations"][0]["raw"]


def test_enum_violation_in_translated_query_is_judged_by_the_game_master() -> None:
    recorder = Recorder(sequence([tool("query_hotels", {"sql_where": "area = 'downtown'"})]))
    record = play(AutoTODSystem.from_options(options(recorder.backend)))
    assert record.outcome is Outcome.ABORTED
    assert "area" in record.details["violations"][0]["reason"]


def test_empty_reply_is_a_violation() -> None:
    record = play(AutoTODSystem.from_options(options(Recorder(sequence([text("  ")])).backend)))
    assert record.outcome is Outcome.ABORTED
    assert record.details["violations"][0]["reason"] == "no tool call"


def test_retrieve_tools_are_not_offered_so_calling_one_is_passed_through() -> None:
    # the game master still knows the tool; the agent was not offered it but it is a valid call
    recorder = Recorder(sequence([tool("retrievefromhoteldb", {"area": "north"}), *GOOD[1:]]))
    record = play(AutoTODSystem.from_options(options(recorder.backend)))
    assert events(record, "db_query")[0]["arguments"] == {"area": "north"}
