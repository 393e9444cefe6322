"""The tool environment's world: what can be searched and booked, with which tools and rules.

One :class:`World` is everything the game master, the action parsers (both protocols), the
booking validator and the built-in systems read about the domains of a task: its entities, the
tools and their JSON schemas, the informable and booking slots, what a booking must hold, the
value normaliser and the database. :func:`.of_task_set.world_of` gives the world of a task set:

* ``test``, ``dev``, ``synthetic``, ``unrealistic`` -- MultiWOZ's restaurant, hotel and train,
  generated from three domain packs per set (``data/multiwoz/packs``; ``synthetic`` and
  ``unrealistic`` are variants with their own database, ``unrealistic`` also with its own
  values and operators); :func:`multiwoz_world` builds the same world from :mod:`..schema` and
  :mod:`..db`, the reference a test compares every set's packs with;
* ``pack:<folder>`` -- a domain pack (:mod:`..domains.pack`), tasks generated from it by
  ``todeval data domain PACK --generate-tasks N``.

Worlds are read-only and built once per process and task set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from todeval.benchmarks.booking.db import VenueDatabase
from todeval.benchmarks.booking.schema import OPERATORS
from todeval.benchmarks.booking.tasks import PACK_PREFIX


@dataclass(frozen=True)
class World:
    """One world (see the module). Per entity (``domain``) tuples keep the declared order."""

    name: str
    entities: tuple[str, ...]
    db_tools: Mapping[str, str]
    """search tool name -> entity"""
    booking_tools: Mapping[str, str]
    """booking tool name -> entity"""
    informable: Mapping[str, tuple[str, ...]]
    """the columns a search or a booking lookup may constrain"""
    book_slots: Mapping[str, tuple[str, ...]]
    optional_attributes: Mapping[str, tuple[str, ...]]
    mandatory: Mapping[str, tuple[str, ...]]
    """what the game master needs before it looks a booking up"""
    operator_slots: Mapping[str, tuple[str, ...]]
    operators: tuple[str, ...]
    accepted: Mapping[str, list[str]]
    """``"<entity>-<slot>"`` -> the values a booking may give (``book<slot>`` for booking
    slots, as MultiWOZ's schema file spells them)"""
    tools: tuple[dict[str, Any], ...]
    """``followup`` and a search and a booking tool per entity, OpenAI function format"""
    normalise_value: Callable[[str, Any], str]
    """(slot, value) -> the data's spelling"""
    upper_slots: frozenset[str]
    """slots whose values are upper-case (ids)"""
    clemtodd_search: Mapping[str, tuple[str, ...]]
    """``clemtodd``: the fields a search keeps (the original's search models)"""
    clemtodd_booking: Mapping[str, tuple[str, ...]]
    """``clemtodd``: the booking fields a booking call keeps beside the search ones"""
    clemtodd_lookup: Mapping[str, tuple[str, ...]]
    """``clemtodd``: the slots a booking is looked up with"""
    database: Callable[[], VenueDatabase]
    compare: Mapping[str, Mapping[str, str]]
    """entity -> slot -> the comparison a user's value means to a system searching with it
    (MultiWOZ: leave at or after, arrive by); slots not listed mean ``=``"""
    reported: Mapping[str, tuple[str, ...]]
    """entity -> the row's columns a system tells the user after a booking"""
    descriptions: Mapping[str, str]
    """entity -> what one row is (``a rental car``)"""
    service: str | None = None
    """who the assistant is (a pack's ``service``); None for MultiWOZ, whose LLM players read
    the package's templates as written"""
    from_pack: bool = False
    """a user's domain pack (False for MultiWOZ's worlds, read from its packs or not: its
    controls keep the original's conventions where a pack's differ)"""

    def tools_list(self) -> list[dict[str, Any]]:
        """The tool definitions (a fresh copy: a system may change its own)."""
        return [_copied(t) for t in self.tools]

    def tool_parameters(self) -> dict[str, dict[str, Any]]:
        """Tool name -> JSON schema of its arguments."""
        return {t["function"]["name"]: t["function"]["parameters"] for t in self.tools}

    def user_operator(self, entity: str, slot: str) -> str:
        """The operator a system searches ``slot`` with for a value the user gave (``=`` unless
        the world declares another and offers it)."""
        operator = self.compare.get(entity, {}).get(slot, "=")
        return operator if operator in self.operators else "="

    def search_tool(self, entity: str) -> str:
        return next(tool for tool, e in self.db_tools.items() if e == entity)

    def booking_tool(self, entity: str) -> str:
        return next(tool for tool, e in self.booking_tools.items() if e == entity)

    def booking_details(self, entity: str) -> tuple[str, ...]:
        """The booking tool's required arguments that are not columns (people, day, ...): what
        a system must ask the user for before it books."""
        required = self.tool_parameters()[self.booking_tool(entity)].get("required", [])
        return tuple(k for k in required if k not in self.informable[entity])

    def operator_keys(self) -> frozenset[str]:
        return frozenset(s for slots in self.operator_slots.values() for s in slots)


def _copied(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists and tuples of plain values): what
    ``copy.deepcopy`` gives for a tool schema, at a fraction of its cost (once per episode)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value


def is_pack(task_set: str) -> bool:
    return task_set.startswith(PACK_PREFIX)


def pack_task_set(folder: str | Path) -> str:
    """The task-set name of a pack's tasks: ``pack:<resolved folder>``."""
    return PACK_PREFIX + str(Path(folder).resolve())


def multiwoz_world(task_set: str) -> World:
    """The world of a MultiWOZ task set (restaurant, hotel, train) from :mod:`..schema`'s
    constants and :mod:`..db`: the reference its packs' world (:func:`.of_task_set.world_of`) is
    checked against."""
    from todeval.benchmarks.booking import schema as s
    from todeval.benchmarks.booking.db import load_database
    from todeval.benchmarks.booking.tasks import TASK_SETS, normalise_value

    if task_set not in TASK_SETS:
        raise KeyError(task_set)
    values = s.slot_values(task_set)
    upper = frozenset({"trainid"})
    return World(
        name=task_set,
        entities=tuple(s.INFORMABLE),
        db_tools=dict(s.DB_TOOLS),
        booking_tools=dict(s.BOOKING_TOOLS),
        informable=dict(s.INFORMABLE),
        book_slots=dict(s.BOOK_SLOTS),
        optional_attributes=dict(s.OPTIONAL_BOOKING_ATTRIBUTES),
        mandatory=dict(s.MANDATORY_BOOKING_KEYS),
        operator_slots=dict(s.OPERATOR_SLOTS),
        operators=tuple(values.operators),
        accepted=values.possible_values,
        tools=tuple(s.tool_definitions(task_set)),
        normalise_value=normalise_value,
        upper_slots=upper,
        clemtodd_search=dict(s.SEARCH_FIELDS),
        clemtodd_booking=dict(s.BOOKING_FIELDS),
        clemtodd_lookup=dict(s.LOOKUP_KEYS),
        database=lambda: load_database(task_set),
        compare={"restaurant": {}, "hotel": {}, "train": {"leaveat": ">=", "arriveby": "<="}},
        reported=dict(s.REPORTED),
        descriptions=dict(s.DESCRIPTIONS),
    )


__all__ = ["OPERATORS", "PACK_PREFIX", "World", "is_pack", "multiwoz_world", "pack_task_set"]
