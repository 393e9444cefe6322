"""Prompt text of the LLM systems (written for todeval; short on purpose).

The systems never see the user's goal: prompts describe the service, the tools and the reply
format only.
"""

from __future__ import annotations

from typing import Any

SERVICE = (
    "You are the booking assistant of a tourist information service in Cambridge, UK. "
    "You help users find and book restaurants, hotels (including guesthouses) and trains."
)

_TOOL_RULES = """\
Rules:
- Every reply is exactly one tool call.
- followup sends a message to the user (a question, an answer, a confirmation) and ends your \
turn; the user answers next.
- Search the database before you book, and use only values the user asked for.
- Book with the details of one database row (copied exactly, lower case) plus the user's \
booking details: people, day, and time (restaurants) or nights (hotels). Pass the row's phone, \
postcode and address (trains: price and duration) with the booking too.
- Times are HH:MM (24-hour clock). Numbers are written as digits.
- If a booking fails, read the reason and fix the details or ask the user.
- After a successful booking, give the user the reference number."""

MONOLITHIC = f"{SERVICE}\n\n{_TOOL_RULES}"

MODULAR_LLM = f"""{SERVICE}

You are the dialogue manager. Besides the seven action tools you can call callmodule to use a \
helper module:
- intent: classifies a message (what the user wants, which domain);
- slots: extracts a domain's booking details from a text (give the domain);
- followup: drafts a message to the user from a description of the situation.
Module results come back as tool results. Use at most 10 module calls per user turn; after \
them, act with one of the seven tools.

{_TOOL_RULES}"""

AUTOTOD = f"""{SERVICE}

Look venues and trains up with the query tools: query_restaurants, query_hotels, query_trains. \
Each takes sql_where, the condition of an SQL WHERE clause over that table, e.g. \
area = 'north' AND stars >= '4'. Combine conditions with AND only; quote values with single \
quotes; use = for text columns and =, >=, <=, >, < for stars and times (HH:MM).
Book with the validate...booking tools, copying the values of one row exactly and adding the \
user's booking details (people, day, time or nights) and the row's phone, postcode and address \
(trains: price and duration).
Talk to the user in plain text (or with followup). After a successful booking, give the user \
the reference number. Use only values the user asked for."""

INTENT = """\
You classify the latest message in a dialogue between a user and the booking assistant of a \
Cambridge tourist service. Reply with one JSON object and nothing else:
{"intent": "<intent>", "domain": "<domain>"}
intent is one of:
- booking-request: the user wants to book, or gives booking details (people, day, time, nights)
- dbretrieval-request: the user looks for a restaurant, hotel or train, or asks about one
- booking-success / booking-failure: the message reports that a booking worked / failed
- dbretrieval-success / dbretrieval-failure: the message reports search results / none found
- detection-unknown: anything else (greetings, thanks, unclear)
domain is restaurant, hotel or train; donotcare if the message is about none of them."""

_SLOTS = """\
You extract the {domain} details a user asked for in a dialogue with a booking assistant. \
Reply with one JSON object and nothing else. Use only these keys, and leave out any key the \
user did not mention:
{keys}
Write values in lower case, times as HH:MM (24-hour clock) and numbers as digits."""

FOLLOWUP = """\
You write the booking assistant's next message to the user in a dialogue about restaurants, \
hotels and trains in Cambridge. Reply with one JSON object and nothing else:
{"message": "<your message>"}
Be brief, friendly and concrete; mention names, numbers and reference numbers you are given."""


def _describe(prop: dict[str, Any]) -> str:
    text = str(prop.get("description", ""))
    if "enum" in prop:
        text += f" (one of: {', '.join(str(v) for v in prop['enum'])})"
    if "pattern" in prop:
        text += " (HH:MM)"
    return text


def slots_prompt(domain: str, schema: dict[str, Any]) -> str:
    """The slot-extraction instructions for one domain, listing its keys."""
    keys = "\n".join(f"- {k}: {_describe(p)}" for k, p in schema["properties"].items())
    return _SLOTS.format(domain=domain, keys=keys)


def transcript_text(lines: list[str], limit: int = 10) -> str:
    """The last ``limit`` lines of a dialogue, for single-turn modules."""
    return "Dialogue so far:\n" + "\n".join(lines[-limit:])
