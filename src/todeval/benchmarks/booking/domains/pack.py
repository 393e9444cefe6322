"""A domain pack: a folder that declares a bookable world -- its entities, their slots and data.

``domain.yaml`` (or ``domain.json``) holds the schema; the data sits beside it (CSV with a
header row, a JSON list of objects, or a table of an SQLite file). One pack may hold several
entities; a task draws its goals from the entities of one pack. The format::

    pack: car-rental                 # [a-z0-9-]+
    description: Cars to rent at three branches.
    service: Fenland Car Hire, which rents cars at three branches  # for the LLM players
    entities:
      car:
        description: a rental car
        data: cars.csv               # or cars.json, or rental.sqlite#cars
        key: carid                   # the slot that names one row
        slots:                       # informable: DB columns a search or booking may constrain
          carid: {description: car id, type: text, case: upper, search: false}
          category: {description: car class, type: categorical, values: [economy, suv]}
          seats: {description: number of seats, type: integer, operators: true}
        booking:                     # booking slots: what the user gives to book (not columns)
          day: {description: pick-up day, type: categorical, values: [monday, tuesday]}
          days: {description: rental days, type: integer, values: ["1", "2", "3"]}
        required: [carid, day, days] # the booking tool's required arguments (default: key and
                                     # every booking slot)
        mandatory: [carid, day]      # what the game master needs before it looks a booking up
                                     # (default: required)
        attributes: [price, phone]   # columns a booking may pass on (never constraints)
        search_tool: findcar         # tool names (default search<entity>, book<entity>)
        book_tool: bookcar

Slot types: ``categorical`` (its ``values`` are the tool schema's enum; ``aliases`` map other
spellings onto them), ``text``, ``integer`` (digits, kept as text like every value), ``time``
(``HH:MM``, "9:00" read as "09:00"). Values are lower-cased unless ``case: upper`` or
``case: keep``. ``operators: true`` lets a search compare (``=``, ``>=``, ``<=``, ``>``, ``<``);
``search: false`` keeps a slot out of the search tool (it still identifies a booking). A booking
is looked up with the informable slots it gives and succeeds when exactly one row matches.

A pack's ``operators`` (default all five; ``'='`` always among them) are the comparisons a
search may use on its ``operators: true`` slots (``operators: ['=']``: equality only). Per slot,
``check_values: false`` lets the data hold values outside the slot's type and values (and its
aliases map onto them; the tool's enum is still ``values``), and ``pattern: false`` leaves a
time slot's ``HH:MM`` pattern out of the tools (a value is still zero-padded).

Three fields speak only to the built-in systems: a pack's ``service`` (who the assistant is,
in the LLM players' prompts; default "a <pack name> service"), a comparable slot's ``compare``
(the comparison a user's value means to a system that searches with it: ``'>='`` for a
departure time; default ``'='``) and an entity's ``reported`` (the row's columns a system tells
the user after a booking; default the key and the attributes).

A pack may change another: ``extends: ../base`` (a folder, relative to this pack's) reads this
file over the base's as a JSON merge patch (RFC 7386: mappings merge key by key, ``null``
removes a field, any other value -- a list too -- replaces the base's). It needs its own
``pack`` name; data paths it inherits stay relative to the base's folder, those it writes are
relative to its own; its digest covers the base's schema file. MultiWOZ's ``synthetic`` and
``unrealistic`` task sets play such variants (``data/multiwoz/packs/{synthetic,unrealistic}``).

:func:`load_pack` reads and checks a pack; every problem is a one-line
:class:`~todeval.errors.BadInputError` naming the file and the field.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.core import safejson
from todeval.core.userfiles import read_user_sqlite_rows, read_user_text
from todeval.errors import BadInputError

SlotType = Literal["categorical", "text", "integer", "time"]
Operator = Literal["=", ">=", "<=", ">", "<"]
ALL_OPERATORS: tuple[Operator, ...] = ("=", ">=", "<=", ">", "<")
TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_SHORT_TIME = re.compile(r"^\d:[0-5]\d$")
_DATA_TIME = re.compile(r"^\d\d:[0-5]\d$")
SCHEMA_FILES = ("domain.yaml", "domain.yml", "domain.json")
RESERVED = ("followup",)
"""Tool names a pack may not take (the game master's own)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slot(_Strict):
    """One slot: how it is described, typed, spelled and searched."""

    description: str
    type: SlotType = "text"
    values: list[str] | None = Field(None, description="categorical: the allowed values")
    aliases: dict[str, str] = Field(default_factory=dict, description="other spellings -> a value")
    case: Literal["lower", "upper", "keep"] = "lower"
    operators: bool = Field(False, description="a search may compare it (>=, <=, ...)")
    search: bool = Field(True, description="offered as an argument of the search tool")
    search_description: str | None = Field(
        None, description="its description in the search tool (default: description)"
    )
    accepted: list[str] | None = Field(
        None, description="the values a booking may give, if not its values (the validator's)"
    )
    compare: Literal["=", ">=", "<="] = Field(
        "=",
        description="the comparison a user's value means to a system that searches with it "
        "(a departure time: '>=', leave at or after); needs operators: true",
    )
    check_values: bool = Field(
        True,
        description="the data's values are checked against the type and values (false: the "
        "data may hold others, and aliases may map onto them)",
    )
    pattern: bool = Field(True, description="a time slot's tool argument carries the HH:MM pattern")

    def normalise(self, value: Any) -> str:
        """One value in the pack's spelling (stripped, cased, aliased, times zero-padded)."""
        text = str(value).strip()
        if self.case == "upper":
            text = text.upper()
        elif self.case == "lower":
            text = text.lower()
        text = self.aliases.get(text, text)
        if self.type == "time" and _SHORT_TIME.match(text):
            text = "0" + text
        return text


class Entity(_Strict):
    """One kind of thing that can be searched for and booked (a table of the data)."""

    description: str
    data: str = Field(description="the rows: a CSV or JSON file, or FILE.sqlite#table")
    key: str = Field(description="the slot that names one row (a name, an id)")
    slots: dict[str, Slot]
    booking: dict[str, Slot] = Field(default_factory=dict)
    required: list[str] | None = None
    mandatory: list[str] | None = None
    attributes: list[str] = Field(default_factory=list)
    attribute_descriptions: dict[str, str] = Field(
        default_factory=dict, description="an attribute's description in the booking tool"
    )
    search_tool: str | None = None
    book_tool: str | None = None
    search_tool_description: str | None = None
    book_tool_description: str | None = None
    unique_key: bool = Field(True, description="no two rows share the key (checked)")
    lowercase: bool = Field(
        False, description="column names and the other columns' values are lower-cased"
    )
    drop: list[str] = Field(default_factory=list, description="columns left out of the data")
    reported: list[str] | None = Field(
        None,
        description="the row's columns a system tells the user after a booking (default: the "
        "key and the attributes)",
    )
    clemtodd: dict[Literal["search", "booking", "lookup"], list[str]] | None = Field(
        None,
        description="--protocol clemtodd: the fields a search call keeps, the booking fields a "
        "booking call keeps beside them, the slots a booking is looked up with (default: the "
        "searchable slots; the booking slots, the other slots and the attributes; every slot)",
    )


class PackSchema(_Strict):
    """The whole ``domain.yaml`` (merged over the pack it ``extends``)."""

    pack: str
    extends: str | None = Field(
        None, description="the folder of a pack this one changes (relative to this pack's)"
    )
    description: str = ""
    service: str | None = Field(
        None,
        description="who the assistant is, completing 'You are the booking assistant of ...' "
        "in the LLM players' prompts (default: 'a <pack name> service')",
    )
    operators: list[Operator] = Field(
        default_factory=lambda: list(ALL_OPERATORS),
        description="the comparisons a search may use on a slot with operators: true",
    )
    entities: dict[str, Entity]


class DomainPack(BaseModel):
    """A loaded, checked pack: its schema, its folder and its rows (normalised)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    schema_: PackSchema = Field(alias="schema")
    folder: Path
    rows: dict[str, list[dict[str, str]]]
    bases: tuple[Path, ...] = ()
    """the schema files of the packs it extends, nearest first"""

    @property
    def name(self) -> str:
        return self.schema_.pack

    @property
    def entities(self) -> dict[str, Entity]:
        return self.schema_.entities

    @property
    def operators(self) -> tuple[str, ...]:
        return tuple(self.schema_.operators)

    def search_tool(self, entity: str) -> str:
        return self.entities[entity].search_tool or f"search{entity}"

    def book_tool(self, entity: str) -> str:
        return self.entities[entity].book_tool or f"book{entity}"

    def required(self, entity: str) -> list[str]:
        e = self.entities[entity]
        return list(e.required if e.required is not None else [e.key, *e.booking])

    def mandatory(self, entity: str) -> list[str]:
        e = self.entities[entity]
        return list(e.mandatory if e.mandatory is not None else self.required(entity))

    def reported(self, entity: str) -> list[str]:
        e = self.entities[entity]
        return list(e.reported if e.reported is not None else [e.key, *e.attributes])

    @property
    def service(self) -> str:
        return self.schema_.service or f"a {self.name.replace('-', ' ')} service"

    def slot(self, entity: str, name: str) -> Slot | None:
        e = self.entities[entity]
        return e.slots.get(name) or e.booking.get(name)

    def normalise(self, entity: str, name: str, value: Any) -> str:
        """``value`` of slot ``name`` in the pack's spelling (an unknown slot: stripped,
        lower-cased)."""
        found = self.slot(entity, name)
        return found.normalise(value) if found is not None else str(value).strip().lower()


def _fail(where: Path | str, what: str) -> BadInputError:
    return BadInputError(f"{where}: {what}")


def _schema_file(folder: Path) -> Path:
    if not folder.is_dir():
        raise _fail(folder, "not a domain pack folder")
    for name in SCHEMA_FILES:
        if (folder / name).is_file():
            return folder / name
    raise _fail(folder, f"no {' or '.join(SCHEMA_FILES)} in the folder")


MAX_PACK_FILE_BYTES = 512 * 1024 * 1024
"""The largest schema or data file of a domain pack read (512 MiB)."""


def _read_raw(path: Path) -> Any:
    text = read_user_text(path, what="pack schema", max_bytes=MAX_PACK_FILE_BYTES)
    try:
        if path.suffix == ".json":
            return safejson.loads(text)
        raw = yaml.safe_load(text)
        safejson.check_depth(raw)
        return raw
    except RecursionError:
        raise _fail(path, "nested too deeply") from None
    except safejson.JsonDepthError as exc:
        raise _fail(path, f"nested too deeply ({exc})") from None
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _fail(path, f"not valid {path.suffix.lstrip('.').upper()}: {first}") from None


def merge_patch(base: Any, patch: Any) -> Any:
    """``patch`` over ``base`` as a JSON merge patch (RFC 7386): mappings merge key by key,
    ``null`` removes a key, any other value (a list too) replaces the base's."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _rebased(raw: Any, base: Path, folder: Path) -> Any:
    """A base pack's schema with its data paths relative to the extending pack's folder."""
    entities = raw.get("entities") if isinstance(raw, dict) else None
    if not isinstance(entities, dict):
        return raw
    moved = {}
    for name, entity in entities.items():
        if isinstance(entity, dict) and isinstance(entity.get("data"), str):
            file, sep, table = entity["data"].partition("#")
            entity = {**entity, "data": os.path.relpath(base / file, folder) + sep + table}
        moved[name] = entity
    return {**raw, "entities": moved}


def _resolve(path: Path, seen: tuple[Path, ...]) -> tuple[Any, tuple[Path, ...]]:
    """The raw schema in ``path`` merged over the packs it extends, and their schema files."""
    raw = _read_raw(path)
    if not isinstance(raw, dict) or raw.get("extends") is None:
        return raw, ()
    extends = raw["extends"]
    folder = path.parent.resolve()
    base = (folder / str(extends)).resolve()
    if not isinstance(extends, str) or not base.is_dir():
        raise _fail(path, f"extends: {extends!r} is not a pack folder (relative to this one)")
    if base in (folder, *seen):
        raise _fail(path, f"extends: {extends!r} extends this pack again")
    if "pack" not in raw:
        raise _fail(path, "pack: a pack that extends another needs its own name")
    base_path = _schema_file(base)
    base_raw, bases = _resolve(base_path, (*seen, folder))
    if isinstance(base_raw, dict) and raw["pack"] == base_raw.get("pack"):
        raise _fail(path, "pack: a pack that extends another needs its own name")
    merged = merge_patch(_rebased(base_raw, base, folder), raw)
    return merged, (base_path, *bases)


def _read_schema(path: Path) -> tuple[PackSchema, tuple[Path, ...]]:
    raw, bases = _resolve(path, ())
    try:
        return PackSchema.model_validate(raw), bases
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "the file"
        raise _fail(path, f"{where}: {error['msg']}") from None


def _read_rows(folder: Path, entity: str, spec: str) -> list[dict[str, Any]]:
    file, _, table = spec.partition("#")
    path = (folder / file).resolve()
    where = f"{folder / file} (entity {entity})"
    if not path.is_file():
        raise _fail(where, "data file not found")
    try:
        if path.suffix in (".sqlite", ".db", ".sqlite3"):
            if not table:
                raise _fail(where, "an SQLite file needs a table: FILE.sqlite#table")
            return read_user_sqlite_rows(
                path, table, what="pack data", max_bytes=MAX_PACK_FILE_BYTES
            )
        if path.suffix == ".json":
            rows = safejson.loads(
                read_user_text(path, what="pack data", max_bytes=MAX_PACK_FILE_BYTES)
            )
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise _fail(where, "a JSON data file must be a list of objects")
            return rows
        if path.suffix == ".csv":
            text = read_user_text(path, what="pack data", max_bytes=MAX_PACK_FILE_BYTES)
            return list(csv.DictReader(io.StringIO(text, newline="")))
    except sqlite3.Error as exc:
        raise _fail(where, f"SQLite: {exc}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error) as exc:
        raise _fail(where, f"cannot read it ({str(exc).splitlines()[0]})") from None
    raise _fail(where, "data must be .csv, .json, or FILE.sqlite#table")


def _check_entity(path: Path, name: str, e: Entity) -> None:
    at = f"entities.{name}"
    if not _NAME.match(name):
        raise _fail(path, f"{at}: an entity name is lower-case letters, digits, - or _")
    if e.key not in e.slots:
        raise _fail(path, f"{at}.key: {e.key!r} is not one of its slots")
    for group, slots in (("slots", e.slots), ("booking", e.booking)):
        for slot_name, slot in slots.items():
            where = f"{at}.{group}.{slot_name}"
            if slot.type == "categorical" and not slot.values:
                raise _fail(path, f"{where}: a categorical slot needs values")
            for alias, target in slot.aliases.items():
                if slot.values and slot.check_values and target not in slot.values:
                    raise _fail(path, f"{where}.aliases: {alias!r} -> {target!r}, not a value")
            if slot.compare != "=" and not slot.operators:
                raise _fail(path, f"{where}.compare: {slot.compare!r} needs operators: true")
            if not slot.check_values and slot.type == "text":
                raise _fail(path, f"{where}.check_values: a text slot's values are not checked")
            if not slot.pattern and slot.type != "time":
                raise _fail(path, f"{where}.pattern: only a time slot has a pattern")
    both = sorted(set(e.slots) & set(e.booking))
    if both:
        raise _fail(path, f"{at}: {', '.join(both)} both a slot and a booking slot")
    known = set(e.slots) | set(e.booking)
    for field in ("required", "mandatory"):
        listed = getattr(e, field) or []
        unknown = [s for s in listed if s not in known]
        if unknown:
            raise _fail(path, f"{at}.{field}: {', '.join(unknown)} not a slot or booking slot")
    clash = [a for a in e.attributes if a in known]
    if clash:
        raise _fail(path, f"{at}.attributes: {', '.join(clash)} already a slot")
    unknown = [s for s in e.reported or [] if s not in e.slots and s not in e.attributes]
    if unknown:
        raise _fail(path, f"{at}.reported: {', '.join(unknown)} not a slot or attribute")
    for part, listed in (e.clemtodd or {}).items():
        unknown = [s for s in listed if s not in known and s not in e.attributes]
        if unknown:
            raise _fail(path, f"{at}.clemtodd.{part}: {', '.join(unknown)} not a slot")


def _column(name: str, lowercase: bool) -> str:
    """A data column's name: as written, or lower-cased without spaces (``arriveBy``)."""
    return name.strip().lower().replace(" ", "") if lowercase else name


def _check_rows(
    where: str, e: Entity, raw: list[dict[str, Any]], attributes: list[str]
) -> list[dict[str, str]]:
    if not raw:
        raise _fail(where, "no rows")
    columns = {_column(str(c), e.lowercase) for c in raw[0]}
    missing = [s for s in [*e.slots, *attributes] if s not in columns]
    if missing:
        raise _fail(where, f"no column for {', '.join(missing)} (columns: {', '.join(columns)})")
    rows: list[dict[str, str]] = []
    keys: set[str] = set()
    for i, r in enumerate(raw, start=1):
        row: dict[str, str] = {}
        for raw_column, value in r.items():
            column = _column(str(raw_column), e.lowercase)
            if value is None or isinstance(value, (dict, list)) or column in e.drop:
                continue
            slot = e.slots.get(column)
            if slot is not None:
                text = slot.normalise(value)
            else:
                text = str(value).strip().lower() if e.lowercase else str(value).strip()
            row[str(column)] = text
            if slot is None or text == "" or not slot.check_values:
                continue
            if slot.type == "categorical" and slot.values and text not in slot.values:
                raise _fail(where, f"row {i}: {column}={text!r} is not one of its values")
            if slot.type == "integer" and not text.isdigit():
                raise _fail(where, f"row {i}: {column}={text!r} is not a whole number")
            if slot.type == "time" and not _DATA_TIME.match(text):  # "24:08": after midnight
                raise _fail(where, f"row {i}: {column}={text!r} is not a time (HH:MM)")
        key = row.get(e.key, "")
        if not key:
            raise _fail(where, f"row {i}: no {e.key}")
        if key in keys and e.unique_key:
            raise _fail(where, f"row {i}: {e.key}={key!r} names two rows")
        keys.add(key)
        rows.append(row)
    return rows


def load_pack(folder: str | Path) -> DomainPack:
    """The pack in ``folder``, read and checked (one-line errors)."""
    folder = Path(folder)
    path = _schema_file(folder)
    schema, bases = _read_schema(path)
    if not re.match(r"^[a-z0-9][a-z0-9-]*$", schema.pack):
        raise _fail(path, "pack: a pack name is lower-case letters, digits and -")
    if "=" not in schema.operators or len(set(schema.operators)) < len(schema.operators):
        raise _fail(path, "operators: '=' and each other comparison at most once")
    if not schema.entities:
        raise _fail(path, "entities: a pack needs at least one entity")
    tools: dict[str, str] = {}
    rows: dict[str, list[dict[str, str]]] = {}
    for name, entity in schema.entities.items():
        _check_entity(path, name, entity)
        for tool in (entity.search_tool or f"search{name}", entity.book_tool or f"book{name}"):
            if tool in tools or tool in RESERVED:
                raise _fail(path, f"entities.{name}: tool name {tool!r} is taken")
            tools[tool] = name
        where = f"{folder / entity.data.partition('#')[0]} (entity {name})"
        raw = _read_rows(folder, name, entity.data)
        rows[name] = _check_rows(where, entity, raw, entity.attributes)
    return DomainPack(schema=schema, folder=folder.resolve(), rows=rows, bases=bases)


@cache
def cached_pack(folder: str) -> DomainPack:
    """:func:`load_pack` once per process for a resolved folder (packs are read-only)."""
    return load_pack(Path(folder))


__all__ = [
    "ALL_OPERATORS",
    "SCHEMA_FILES",
    "DomainPack",
    "Entity",
    "PackSchema",
    "Slot",
    "SlotType",
    "cached_pack",
    "load_pack",
    "merge_patch",
]
