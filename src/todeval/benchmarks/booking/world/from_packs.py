"""A domain pack's :class:`~todeval.benchmarks.booking.world.model.World`: its tools, generated.

Per entity, a search tool (every slot with ``search: true``; a slot with ``operators: true``
takes ``{"operator": ..., "value": ...}``, the operator one of the pack's ``operators``) and a
booking tool (the searchable slots, the booking slots, the other informable slots, then the
attributes; ``required`` as declared), plus the game master's ``followup``. Enums come from
categorical slots' values, ``HH:MM`` patterns from time slots (unless ``pattern: false``). The
database is the pack's rows in the same in-memory SQLite store MultiWOZ's use. The packs of one
world offer the same operators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from todeval.benchmarks.booking.db import VenueDatabase
from todeval.benchmarks.booking.domains.pack import TIME_PATTERN, DomainPack, Slot, cached_pack
from todeval.benchmarks.booking.schema import FOLLOWUP, function_tool, object_schema
from todeval.benchmarks.booking.world.model import PACK_PREFIX, World
from todeval.errors import BadInputError

_BOOK = "book{}"


def _property(slot: Slot, description: str) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", "description": description}
    if slot.type == "categorical" and slot.values:
        prop["enum"] = list(slot.values)
    if slot.type == "time" and slot.pattern:
        prop["pattern"] = TIME_PATTERN
    return prop


def _search_property(slot: Slot, operators: tuple[str, ...]) -> dict[str, Any]:
    description = slot.search_description or slot.description
    if not slot.operators:
        return _property(slot, description)
    return {
        "type": "object",
        "description": description,
        "properties": {
            "operator": {"type": "string", "description": "comparison", "enum": list(operators)},
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


def _followup() -> dict[str, Any]:
    return function_tool(
        FOLLOWUP,
        "Send a message to the user (a question, an answer, a confirmation). Ends your turn.",
        object_schema({"message": {"type": "string", "description": "the message"}}, ["message"]),
    )


def _search_tool(pack: DomainPack, name: str) -> dict[str, Any]:
    e = pack.entities[name]
    search = {n: _search_property(s, pack.operators) for n, s in e.slots.items() if s.search}
    return function_tool(
        pack.search_tool(name),
        e.search_tool_description or f"Search the {name} database ({e.description}).",
        object_schema(search, []),
    )


def _book_tool(pack: DomainPack, name: str) -> dict[str, Any]:
    e = pack.entities[name]
    booking: dict[str, Any] = {}
    for arg in booking_arguments(pack, name):
        slot = pack.slot(name, arg)
        booking[arg] = (
            _property(slot, slot.description)
            if slot is not None
            else {"type": "string", "description": e.attribute_descriptions.get(arg, arg)}
        )
    return function_tool(
        pack.book_tool(name),
        e.book_tool_description
        or f"Book a {name}; returns a reference number or the reason it failed.",
        object_schema(booking, pack.required(name)),
    )


def pack_tools(packs: Sequence[DomainPack]) -> list[dict[str, Any]]:
    """``followup``, every entity's search tool, then every entity's booking tool."""
    entities = [(pack, name) for pack in packs for name in pack.entities]
    return [
        _followup(),
        *(_search_tool(pack, name) for pack, name in entities),
        *(_book_tool(pack, name) for pack, name in entities),
    ]


def pack_world(folder: str) -> World:
    """The world of the pack in ``folder`` (read once per process)."""
    pack = cached_pack(folder)
    return packs_world((folder,), pack.name)


def packs_world(folders: Sequence[str], name: str, *, from_pack: bool = True) -> World:
    """One world of the entities of several packs (MultiWOZ: restaurant, hotel, train;
    ``from_pack=False`` keeps MultiWOZ's own conventions where a pack's differ)."""
    packs = [cached_pack(f) for f in folders]
    of: dict[str, DomainPack] = {}
    for pack in packs:
        for entity in pack.entities:
            if entity in of:
                raise BadInputError(f"{pack.folder}: entity {entity!r} is in two packs")
            of[entity] = pack
    operators = {pack.operators for pack in packs}
    if len(operators) > 1:
        raise BadInputError(f"{', '.join(folders)}: the packs offer different operators")
    entities = tuple(of)
    spec = {n: of[n].entities[n] for n in entities}
    accepted: dict[str, list[str]] = {}
    for n, e in spec.items():
        for slot_name, slot in e.slots.items():
            if slot.accepted or slot.values:
                accepted[f"{n}-{slot_name}"] = list(slot.accepted or slot.values or [])
        for slot_name, slot in e.booking.items():
            if slot.accepted or slot.values:
                accepted[f"{n}-{_BOOK.format(slot_name)}"] = list(
                    slot.accepted or slot.values or []
                )

    def normalise(slot: str, value: Any) -> str:
        for entity in entities:
            if of[entity].slot(entity, slot) is not None:
                return of[entity].normalise(entity, slot, value)
        return str(value).strip().lower()

    def clemtodd(n: str, part: str, default: tuple[str, ...]) -> tuple[str, ...]:
        declared = (spec[n].clemtodd or {}).get(part)  # type: ignore[call-overload]
        return tuple(declared) if declared is not None else default

    informable = {n: tuple(e.slots) for n, e in spec.items()}
    db = VenueDatabase(
        PACK_PREFIX + name,
        {n: [dict(r) for r in of[n].rows[n]] for n in entities},
        informable=informable,
        normalise_row=None,
        normalise_value=normalise,
        numeric=frozenset(
            k for e in spec.values() for k, s in e.slots.items() if s.type == "integer"
        ),
    )
    return World(
        name=name,
        entities=entities,
        db_tools={of[n].search_tool(n): n for n in entities},
        booking_tools={of[n].book_tool(n): n for n in entities},
        informable=informable,
        book_slots={n: tuple(e.booking) for n, e in spec.items()},
        optional_attributes={n: tuple(e.attributes) for n, e in spec.items()},
        mandatory={n: tuple(of[n].mandatory(n)) for n in entities},
        operator_slots={
            n: tuple(k for k, s in e.slots.items() if s.operators) for n, e in spec.items()
        },
        operators=packs[0].operators,
        accepted=accepted,
        tools=tuple(pack_tools(packs)),
        normalise_value=normalise,
        upper_slots=frozenset(
            k for e in spec.values() for k, s in e.slots.items() if s.case == "upper"
        ),
        clemtodd_search={
            n: clemtodd(n, "search", tuple(k for k, s in e.slots.items() if s.search))
            for n, e in spec.items()
        },
        clemtodd_booking={  # like the original's train booking (trainid is no search field)
            n: clemtodd(
                n,
                "booking",
                (*e.booking, *(k for k, s in e.slots.items() if not s.search), *e.attributes),
            )
            for n, e in spec.items()
        },
        clemtodd_lookup={n: clemtodd(n, "lookup", tuple(e.slots)) for n, e in spec.items()},
        database=lambda: db,
        compare={
            n: {k: s.compare for k, s in e.slots.items() if s.compare != "="}
            for n, e in spec.items()
        },
        reported={n: tuple(of[n].reported(n)) for n in entities},
        descriptions={n: e.description for n, e in spec.items()},
        service="; ".join(p.service for p in packs) if from_pack else None,
        from_pack=from_pack,
    )


__all__ = ["booking_arguments", "pack_tools", "pack_world", "packs_world"]
