"""Prompt and reply schema of ``multiwoz-turns``.

The model gets one system message (the task, the placeholder vocabulary, the state slots and
the reply format) and one user message (the conversation so far: user turns and the gold
delexicalised system turns, ending with the user's latest turn). It answers with one JSON
object: the delexicalised ``response``, the dialogue ``state`` and its ``active_domains``.
"""

from __future__ import annotations

from typing import Any

from todeval.backends.types import ChatMessage
from todeval.benchmarks.multiwoz_turns.corpus import MultiwozDialogue

PROMPT_VERSION = "multiwoz-turns/1"

DOMAINS: tuple[str, ...] = (
    "restaurant", "hotel", "attraction", "train", "taxi", "police", "hospital",
)  # fmt: skip

# The slots of the MultiWOZ 2.2 gold states, as the scorer names them.
STATE_SLOTS: dict[str, tuple[str, ...]] = {
    "restaurant": ("name", "food", "area", "pricerange", "bookday", "booktime", "bookpeople"),
    "hotel": (
        "name", "type", "area", "pricerange", "stars", "internet", "parking",
        "bookday", "bookpeople", "bookstay",
    ),
    "attraction": ("name", "type", "area"),
    "train": ("departure", "destination", "day", "leave", "arrive", "bookpeople"),
    "taxi": ("departure", "destination", "leave", "arrive"),
    "police": (),
    "hospital": (),
}  # fmt: skip

SYSTEM_PROMPT = """\
You are the dialogue system of the Cambridge TownInfo centre. You help users find and book \
restaurants, hotels, attractions and trains, book taxis, and contact the police or a hospital.

You read a conversation between a user and the system and write the system's next turn.

1. "response": the system's reply, delexicalized. Never write a concrete value that would come \
from the database or from a booking; write its placeholder instead:
[value_name] name of a restaurant, hotel, attraction, hospital or police station
[value_address] address
[value_phone] phone number
[value_postcode] postcode
[value_reference] booking reference number
[value_id] train ID
[value_time] time or duration (departure, arrival, booking time, travel time)
[value_day] day of the week
[value_place] departure or destination of a train or taxi
[value_price] price, price range or entrance fee
[value_count] a number (how many options, stars, people, nights)
[value_area] area of town
[value_food] type of food
[value_type] type of venue, or the taxi's car type
Earlier system turns in the conversation are written the same way. Offer a venue by \
[value_name], give what the user asked for with its placeholder, and make a booking when the \
user has given everything it needs (then give the [value_reference]).

2. "state": everything the user has asked for so far, by domain, after the user's latest turn. \
Use only these slots, and leave out slots the user has not mentioned or does not mind:
restaurant: name, food, area, pricerange, bookday, booktime, bookpeople
hotel: name, type, area, pricerange, stars, internet, parking, bookday, bookpeople, bookstay
attraction: name, type, area
train: departure, destination, day, leave, arrive, bookpeople
taxi: departure, destination, leave, arrive
(police and hospital have no slots). Values in lower case: times as hh:mm (24-hour clock), \
days as weekday names, numbers as digits, yes or no for internet and parking, area one of \
centre, north, south, east, west, pricerange one of cheap, moderate, expensive. "leave" is the \
time to leave after, "arrive" the time to arrive by.

3. "active_domains": the domain or domains your reply is about, from: restaurant, hotel, \
attraction, train, taxi, police, hospital.

Answer with one JSON object and nothing else, for example:
{"response": "[value_name] is a [value_price] restaurant in the [value_area] . shall i book \
it ?", "state": {"restaurant": {"food": "italian", "area": "centre"}}, \
"active_domains": ["restaurant"]}"""


def reply_schema() -> dict[str, Any]:
    """The JSON schema of a reply (sent to the backend with ``--constrained``)."""
    state = {
        "type": "object",
        "properties": {
            domain: {
                "type": "object",
                "properties": {slot: {"type": "string"} for slot in slots},
                "additionalProperties": False,
            }
            for domain, slots in STATE_SLOTS.items()
        },
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "response": {"type": "string"},
            "state": state,
            "active_domains": {"type": "array", "items": {"type": "string", "enum": list(DOMAINS)}},
        },
        "required": ["response", "state", "active_domains"],
        "additionalProperties": False,
    }


def transcript(dialogue: MultiwozDialogue, turn: int) -> str:
    """The conversation up to and including the user's utterance of system turn ``turn``."""
    lines = []
    for i in range(turn + 1):
        lines.append(f"User: {dialogue.users[i]}")
        if i < turn:
            lines.append(f"System: {dialogue.systems[i]}")
    return "\n".join(lines)


def messages(dialogue: MultiwozDialogue, turn: int) -> list[ChatMessage]:
    """The chat messages of the call for system turn ``turn`` (0-based)."""
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(
            role="user",
            content=f"Conversation so far:\n{transcript(dialogue, turn)}\n\n"
            "Write the system's next turn as one JSON object.",
        ),
    ]
