"""The booking benchmark's action schema: seven function tools, per task set.

The dialogue system under test answers every observation with exactly one tool call. The tools'
JSON schemas are what an LLM system is shown; the game master validates every call against the
same schemas, so an offline Python system and an LLM are held to one standard.

The ``unrealistic`` set is played with its own schema: the enums hold that set's nonsense values
and comparison operators are restricted to ``=``.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from pydantic import BaseModel

from todeval.benchmarks.booking.tasks import read_json

FOLLOWUP = "followup"
DB_TOOLS = {
    "retrievefromrestaurantdb": "restaurant",
    "retrievefromhoteldb": "hotel",
    "retrievefromtraindb": "train",
}
BOOKING_TOOLS = {
    "validaterestaurantbooking": "restaurant",
    "validatehotelbooking": "hotel",
    "validatetrainbooking": "train",
}
TOOL_NAMES = (FOLLOWUP, *DB_TOOLS, *BOOKING_TOOLS)
OPERATORS = ("=", ">=", "<=", ">", "<")
TIME_SLOTS = ("arriveby", "leaveat")
# Slots whose DB query may carry a comparison operator.
OPERATOR_SLOTS = {"hotel": ("stars",), "train": TIME_SLOTS}
# Informable slots: the DB columns a query or a booking lookup may constrain.
INFORMABLE = {
    "restaurant": ("area", "pricerange", "food", "name"),
    "hotel": ("area", "pricerange", "type", "name", "internet", "parking", "stars"),
    "train": ("destination", "departure", "day", "arriveby", "leaveat", "trainid"),
}
BOOK_SLOTS = {
    "restaurant": ("people", "day", "time"),
    "hotel": ("people", "day", "stay"),
    "train": ("people",),
}
OPTIONAL_BOOKING_ATTRIBUTES = {
    "restaurant": ("phone", "postcode", "address"),
    "hotel": ("phone", "postcode", "address"),
    "train": ("price", "duration"),
}
REQUIRED_BOOKING_ARGS = {
    "restaurant": ("food", "area", "pricerange", "name", "people", "day", "time"),
    "hotel": (
        "area",
        "pricerange",
        "type",
        "internet",
        "parking",
        "name",
        "stars",
        "people",
        "day",
        "stay",
    ),
    "train": ("destination", "departure", "day", "arriveby", "leaveat", "people", "trainid"),
}
# The row's columns the built-in LLM systems tell the user after a booking.
REPORTED = {
    "restaurant": ("name", "phone", "address", "postcode"),
    "hotel": ("name", "phone", "address", "postcode"),
    "train": ("trainid", "leaveat", "arriveby", "price"),
}
DESCRIPTIONS = {"restaurant": "a restaurant", "hotel": "a hotel", "train": "a train"}
# What the game master itself requires before it looks a booking up (the original's rule).
MANDATORY_BOOKING_KEYS = {
    "restaurant": ("name", "people", "day", "time"),
    "hotel": ("name", "people", "day", "stay"),
    "train": ("people", "trainid"),
}
TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
# The released clem:todd game master's field tables (the ``clemtodd`` protocol, :mod:`.clemtodd`):
# processfunccallresp.py: the fields of its RestaurantDB/HotelDB/TrainDB models (searches) ...
SEARCH_FIELDS = {
    "restaurant": ("food", "area", "pricerange", "name"),
    "hotel": ("area", "pricerange", "type", "internet", "parking", "name", "stars"),
    "train": ("destination", "departure", "day", "arriveby", "leaveat"),
}
# ... and of RestaurantBook/HotelBook/TrainBook (a booking keeps both sets; train price and
# duration are in neither, so they never reach the booking)
BOOKING_FIELDS = {
    "restaurant": ("people", "day", "time", "postcode", "phone", "address"),
    "hotel": ("people", "day", "stay", "postcode", "phone", "address"),
    "train": ("people", "trainid"),
}
# instancegenerator.py (``domaindbkeys``): the slots a booking is looked up with
LOOKUP_KEYS = {
    "restaurant": ("area", "pricerange", "name", "food"),
    "hotel": ("area", "pricerange", "name", "stars", "type", "internet", "parking"),
    "train": ("destination", "day", "departure", "arriveby", "leaveat", "duration", "trainid"),
}
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


class SlotValues(BaseModel):
    """Enumerated values of the categorical slots used in the tool schemas."""

    name: str
    area: list[str]
    pricerange: list[str]
    type: list[str]
    internet: list[str]
    parking: list[str]
    stars: list[str]
    day: list[str]
    people: list[str]
    stay: list[str]
    operators: list[str]
    time_pattern: str | None
    # Possible values from the MultiWOZ 2.2-style schema file, used by the booking validator:
    # "<domain>-<slot>" -> values (categorical slots only).
    possible_values: dict[str, list[str]]


def _possible_values(schema: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for service in schema:
        for slot in service.get("slots", []):
            values = slot.get("possible_values")
            if slot.get("is_categorical") and values:
                out[str(slot["name"]).lower()] = [str(v).lower() for v in values]
    return out


@cache
def slot_values(task_set: str) -> SlotValues:
    """The schema a task set is played with (``unrealistic`` has its own)."""
    if task_set == "unrealistic":
        pv = _possible_values(read_json("multiwoz", "booking_tasks", "unrealistic_schema.json"))
        return SlotValues(
            name="unrealistic",
            area=pv["hotel-area"],
            pricerange=pv["hotel-pricerange"],
            type=pv["hotel-type"],
            internet=pv["hotel-internet"],
            parking=pv["hotel-parking"],
            stars=pv["hotel-stars"],
            day=pv["hotel-bookday"],
            people=pv["hotel-bookpeople"],
            stay=pv["hotel-bookstay"],
            operators=["="],
            time_pattern=None,
            possible_values=pv,
        )
    pv = _possible_values(read_json("multiwoz", "schema.json"))
    # Deviation from the original tool enums: stars also allows "0", because a hotel that a test
    # goal names (city centre north b and b) has 0 stars in the DB.
    return SlotValues(
        name="multiwoz",
        area=["centre", "north", "east", "west", "south"],
        pricerange=["cheap", "moderate", "expensive"],
        type=["hotel", "guesthouse"],
        internet=["yes", "no"],
        parking=["yes", "no"],
        stars=["0", "1", "2", "3", "4", "5"],
        day=list(_DAYS),
        people=[str(i) for i in range(1, 9)],
        stay=[str(i) for i in range(1, 9)],
        operators=list(OPERATORS),
        time_pattern=TIME_PATTERN,
        possible_values=pv,
    )


def _str(
    description: str, enum: list[str] | None = None, pattern: str | None = None
) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", "description": description}
    if enum is not None:
        prop["enum"] = enum
    if pattern is not None:
        prop["pattern"] = pattern
    return prop


def _compare(
    description: str, values: SlotValues, enum: list[str] | None, pattern: str | None
) -> dict[str, Any]:
    value = _str("value to compare with", enum, pattern)
    return {
        "type": "object",
        "description": description,
        "properties": {"operator": _str("comparison", values.operators), "value": value},
        "required": ["operator", "value"],
        "additionalProperties": False,
    }


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def function_tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


@cache
def _tool_definitions(task_set: str) -> tuple[dict[str, Any], ...]:
    v = slot_values(task_set)
    tp = v.time_pattern
    area = _str("part of town", v.area)
    price = _str("price range", v.pricerange)
    day = _str("day of the week", v.day)
    people = _str("number of people", v.people)
    restaurant_q = {
        "area": area,
        "pricerange": price,
        "food": _str("type of food"),
        "name": _str("restaurant name"),
    }
    hotel_q = {
        "area": area,
        "pricerange": price,
        "type": _str("hotel or guesthouse", v.type),
        "name": _str("hotel name"),
        "internet": _str("free internet", v.internet),
        "parking": _str("free parking", v.parking),
        "stars": _compare("star rating with a comparison operator", v, v.stars, None),
    }
    train_q = {
        "destination": _str("arrival station"),
        "departure": _str("departure station"),
        "day": day,
        "arriveby": _compare("arrival time (HH:MM) with an operator", v, None, tp),
        "leaveat": _compare("departure time (HH:MM) with an operator", v, None, tp),
    }
    contact = {
        "phone": _str("phone number"),
        "postcode": _str("postcode"),
        "address": _str("address"),
    }
    restaurant_b = {
        **restaurant_q,
        "people": people,
        "day": day,
        "time": _str("time of the reservation (HH:MM)", None, tp),
        **contact,
    }
    hotel_b = {
        **{k: p for k, p in hotel_q.items() if k != "stars"},
        "stars": _str("star rating", v.stars),
        "people": people,
        "day": day,
        "stay": _str("number of nights", v.stay),
        **contact,
    }
    train_b = {
        "destination": train_q["destination"],
        "departure": train_q["departure"],
        "day": day,
        "arriveby": _str("arrival time (HH:MM)", None, tp),
        "leaveat": _str("departure time (HH:MM)", None, tp),
        "people": people,
        "trainid": _str("train id, e.g. TR1234"),
        "price": _str("ticket price"),
        "duration": _str("journey time"),
    }
    return (
        function_tool(
            FOLLOWUP,
            "Send a message to the user (a question, an answer, a confirmation). Ends your turn.",
            object_schema({"message": _str("the message")}, ["message"]),
        ),
        function_tool(
            "retrievefromrestaurantdb",
            "Search the restaurant database.",
            object_schema(restaurant_q, []),
        ),
        function_tool(
            "retrievefromhoteldb", "Search the hotel database.", object_schema(hotel_q, [])
        ),
        function_tool(
            "retrievefromtraindb", "Search the train timetable.", object_schema(train_q, [])
        ),
        function_tool(
            "validaterestaurantbooking",
            "Book a restaurant table; returns a reference number or the reason it failed.",
            object_schema(restaurant_b, list(REQUIRED_BOOKING_ARGS["restaurant"])),
        ),
        function_tool(
            "validatehotelbooking",
            "Book a hotel; returns a reference number or the reason it failed.",
            object_schema(hotel_b, list(REQUIRED_BOOKING_ARGS["hotel"])),
        ),
        function_tool(
            "validatetrainbooking",
            "Book train tickets; returns a reference number or the reason it failed.",
            object_schema(train_b, list(REQUIRED_BOOKING_ARGS["train"])),
        ),
    )


def tool_definitions(task_set: str) -> list[dict[str, Any]]:
    """The seven tools in OpenAI function-tool format (a fresh copy)."""
    return copy.deepcopy(list(_tool_definitions(task_set)))


def tool_parameters(task_set: str) -> dict[str, dict[str, Any]]:
    """Tool name -> JSON schema of its arguments."""
    return {t["function"]["name"]: t["function"]["parameters"] for t in _tool_definitions(task_set)}
