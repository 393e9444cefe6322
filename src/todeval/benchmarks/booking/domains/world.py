"""A domain pack's :class:`~todeval.benchmarks.booking.world.World`: its tools, generated.

Per entity, a search tool (every slot with ``search: true``; a slot with ``operators: true``
takes ``{"operator": ..., "value": ...}``) and a booking tool (the searchable slots, the booking
slots, the other informable slots, then the attributes; ``required`` as declared), plus the
game master's ``followup``. Enums come from categorical slots' values, ``HH:MM`` patterns from
time slots. The database is the pack's rows in the same in-memory SQLite store MultiWOZ's use.
"""

from __future__ import annotations

from typing import Any

from todeval.benchmarks.booking.db import VenueDatabase
from todeval.benchmarks.booking.domains.pack import TIME_PATTERN, DomainPack, Slot, cached_pack
from todeval.benchmarks.booking.schema import FOLLOWUP, OPERATORS, function_tool, object_schema
from todeval.benchmarks.booking.world import PACK_PREFIX, World

_BOOK = "book{}"


def _property(slot: Slot, description: str) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", "description": description}
    if slot.type == "categorical" and slot.values:
        prop["enum"] = list(slot.values)
    if slot.type == "time":
        prop["pattern"] = TIME_PATTERN
    return prop


def _search_property(slot: Slot) -> dict[str, Any]:
    description = slot.search_description or slot.description
    if not slot.operators:
        return _property(slot, description)
    return {
        "type": "object",
        "description": description,
        "properties": {
            "operator": {"type": "string", "description": "comparison", "enum": list(OPERATORS)},
            "value": _property(slot, "value to compare with"),
        },
        "required": ["operator", "value"],
        "additionalProperties": False,
    }


def booking_arguments(pack: DomainPack, entity: str) -> list[str]:
    """The booking tool's arguments, in order (see the module)."""
    e = pack.entities[entity]
    searched = [n for n, s in e.slots.items() if s.search]
    others = [n for n, s in e.slots.items() if not s.search]
    return [*searched, *e.booking, *others, *e.attributes]


def pack_tools(pack: DomainPack) -> list[dict[str, Any]]:
    """``followup`` and the search and booking tool of every entity."""
    tools = [
        function_tool(
            FOLLOWUP,
            "Send a message to the user (a question, an answer, a confirmation). Ends your turn.",
            object_schema(
                {"message": {"type": "string", "description": "the message"}}, ["message"]
            ),
        )
    ]
    for name, e in pack.entities.items():
        search = {n: _search_property(s) for n, s in e.slots.items() if s.search}
        tools.append(
            function_tool(
                pack.search_tool(name),
                e.search_tool_description or f"Search the {name} database ({e.description}).",
                object_schema(search, []),
            )
        )
        booking: dict[str, Any] = {}
        for arg in booking_arguments(pack, name):
            slot = pack.slot(name, arg)
            booking[arg] = (
                _property(slot, slot.description)
                if slot is not None
                else {"type": "string", "description": arg}
            )
        tools.append(
            function_tool(
                pack.book_tool(name),
                e.book_tool_description
                or f"Book a {name}; returns a reference number or the reason it failed.",
                object_schema(booking, pack.required(name)),
            )
        )
    return tools


def pack_world(folder: str) -> World:
    """The world of the pack in ``folder`` (read once per process)."""
    pack = cached_pack(folder)
    entities = tuple(pack.entities)
    accepted: dict[str, list[str]] = {}
    for name, e in pack.entities.items():
        for slot_name, slot in e.slots.items():
            if slot.values:
                accepted[f"{name}-{slot_name}"] = list(slot.values)
        for slot_name, slot in e.booking.items():
            if slot.values:
                accepted[f"{name}-{_BOOK.format(slot_name)}"] = list(slot.values)

    def normalise(slot: str, value: Any) -> str:
        for entity in entities:
            if pack.slot(entity, slot) is not None:
                return pack.normalise(entity, slot, value)
        return str(value).strip().lower()

    def database() -> VenueDatabase:
        return VenueDatabase(
            PACK_PREFIX + pack.name,
            {n: [dict(r) for r in rows] for n, rows in pack.rows.items()},
            informable={n: tuple(e.slots) for n, e in pack.entities.items()},
            normalise_row=None,
            normalise_value=normalise,
            numeric=frozenset(
                k for e in pack.entities.values() for k, s in e.slots.items() if s.type == "integer"
            ),
        )

    db = database()
    search = {n: tuple(k for k, s in e.slots.items() if s.search) for n, e in pack.entities.items()}
    return World(
        name=pack.name,
        entities=entities,
        db_tools={pack.search_tool(n): n for n in entities},
        booking_tools={pack.book_tool(n): n for n in entities},
        informable={n: tuple(e.slots) for n, e in pack.entities.items()},
        book_slots={n: tuple(e.booking) for n, e in pack.entities.items()},
        optional_attributes={n: tuple(e.attributes) for n, e in pack.entities.items()},
        mandatory={n: tuple(pack.mandatory(n)) for n in entities},
        operator_slots={
            n: tuple(k for k, s in e.slots.items() if s.operators) for n, e in pack.entities.items()
        },
        operators=OPERATORS,
        accepted=accepted,
        tools=tuple(pack_tools(pack)),
        normalise_value=normalise,
        upper_slots=frozenset(
            k for e in pack.entities.values() for k, s in e.slots.items() if s.case == "upper"
        ),
        clemtodd_search=search,
        clemtodd_booking={  # like the original's train booking (trainid is no search field)
            n: (*e.booking, *(k for k, s in e.slots.items() if not s.search), *e.attributes)
            for n, e in pack.entities.items()
        },
        clemtodd_lookup={n: tuple(e.slots) for n, e in pack.entities.items()},
        database=lambda: db,
        from_pack=True,
    )


__all__ = ["booking_arguments", "pack_tools", "pack_world"]
