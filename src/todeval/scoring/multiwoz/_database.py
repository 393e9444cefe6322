"""The MultiWOZ venue database as the Inform rule queries it: indexed and memoised.

A query keeps the rows that satisfy every constraint whose slot is a database column:

* ``dontcare``-like values are skipped; a row whose value is ``?`` (unknown) passes;
* names (and restaurant food, train departure/destination) match fuzzily: the standard
  evaluator's partial ratio (see ``_fuzzy``) must be at least 90;
* ``arrive`` keeps trains arriving at or before the constraint, ``leave`` trains leaving at or
  after it (times in minutes; an unparsable time counts as 00:00);
* every other column must be equal.

The shipped database (budzianowski/multiwoz ``db/``) spells one attraction type ``mutliple
sports``; types are canonicalised on load so the three test goals asking for ``multiple
sports`` can be met, as they can with the standard evaluator's own database copy. Other cells
are used as shipped (names are not aliased: ``parkside pools`` stays, as in that copy).

Rows are bit positions in Python integers; each (column, value) pair is turned into a bit mask
once and cached, and whole queries are memoised, so scoring never scans the database per turn.
Results are the sets of matching venue ids (train ids for trains).
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from importlib import resources
from typing import Any

from todeval.scoring.multiwoz._fuzzy import fuzzy_candidates, fuzzy_match
from todeval.scoring.multiwoz._normalize import (
    canonical_type,
    normalize_slot_value,
    time_to_minutes,
)

VENUE_DOMAINS = ("restaurant", "hotel", "attraction", "train")
FUZZY_RATIO = 90
DONTCARE = frozenset({"dontcare", "not mentioned", "don't care", "dont care", "do n't care",
                      "do not care"})  # fmt: skip

_IGNORED_COLUMNS: dict[str, frozenset[str]] = {
    "attraction": frozenset({"location", "openhours"}),
    "hotel": frozenset({"location", "price", "takesbookings"}),
    "restaurant": frozenset({"location", "introduction", "signature"}),
    "train": frozenset(),
}
_FUZZY_COLUMNS: dict[str, frozenset[str]] = {
    "hotel": frozenset({"name"}),
    "attraction": frozenset({"name"}),
    "restaurant": frozenset({"name", "food"}),
    "train": frozenset({"departure", "destination"}),
}
_UNKNOWN = "?"
_MISSING = object()  # a cell that a row does not have


def _column_name(name: str) -> str:
    if name == "id":
        return name
    name = name.lower().replace(" ", "")
    return {"arriveby": "arrive", "leaveat": "leave"}.get(name, name)


def _cell(column: str, value: Any) -> Any:
    """A database cell; venue types are canonicalised (repairs 'mutliple sports')."""
    return canonical_type(value) if column == "type" and isinstance(value, str) else value


def load_rows(domain: str) -> list[dict[str, Any]]:
    """The shipped database rows of a venue domain (package data ``multiwoz/db``)."""
    node = resources.files("todeval") / "data" / "multiwoz" / "db" / f"{domain}_db.json"
    rows: list[dict[str, Any]] = json.loads(node.read_text(encoding="utf-8"))
    return rows


class _TimeIndex:
    """Row masks of times at most / at least a limit, by binary search over distinct times."""

    def __init__(self, minutes: list[int]) -> None:
        by_time: dict[int, int] = {}
        for i, m in enumerate(minutes):
            by_time[m] = by_time.get(m, 0) | (1 << i)
        self.times = sorted(by_time)
        self.up_to: list[int] = []  # rows with time <= times[k]
        acc = 0
        for t in self.times:
            acc |= by_time[t]
            self.up_to.append(acc)
        self.from_: list[int] = [0] * len(self.times)  # rows with time >= times[k]
        acc = 0
        for k in range(len(self.times) - 1, -1, -1):
            acc |= by_time[self.times[k]]
            self.from_[k] = acc

    def at_most(self, limit: int) -> int:
        k = bisect_right(self.times, limit) - 1
        return self.up_to[k] if k >= 0 else 0

    def at_least(self, limit: int) -> int:
        k = bisect_left(self.times, limit)
        return self.from_[k] if k < len(self.times) else 0


class _Table:
    """One domain's rows, stored by column, with per-column value masks built lazily."""

    def __init__(self, domain: str, rows: list[dict[str, Any]]) -> None:
        ignored = _IGNORED_COLUMNS[domain]
        names = {k: _column_name(k) for k in set().union(*rows) if k not in ignored}
        self.domain = domain
        self.n_rows = len(rows)
        # Each column's cells, row by row (_MISSING where a row has no such cell).
        self.cells: dict[str, list[Any]] = {}
        if len(set(names.values())) == len(names):
            for raw, name in names.items():
                values = [row.get(raw, _MISSING) for row in rows]
                if name == "type":
                    values = [_cell(name, v) for v in values]
                self.cells[name] = values
        else:  # two spellings of one column: the later one in each row wins, as in a dict
            renamed = [{names[k]: v for k, v in row.items() if k not in ignored} for row in rows]
            for name in dict.fromkeys(names.values()):
                self.cells[name] = [_cell(name, r.get(name, _MISSING)) for r in renamed]
        # The queryable columns are those of the first row (as in the standard evaluator).
        first = rows[0] if rows else {}
        self.columns = frozenset(names[k] for k in first if k not in ignored)
        self.fuzzy = _FUZZY_COLUMNS[domain]
        id_key = "trainid" if domain == "train" else "id"
        ids = self.cells.get(id_key, [_MISSING] * self.n_rows)
        self.ids = ["" if v is _MISSING else str(v) for v in ids]
        self.all_rows = (1 << self.n_rows) - 1
        self._by_value: dict[str, dict[str, int]] = {}
        self._unknown: dict[str, int] = {}
        self._masks: dict[tuple[str, str], int] = {}
        self._times: dict[str, _TimeIndex] = {}

    def _column(self, column: str) -> list[Any]:
        return self.cells.get(column) or [_MISSING] * self.n_rows

    def _column_index(self, column: str) -> tuple[dict[str, int], int]:
        index = self._by_value.get(column)
        if index is None:
            index = {}
            unknown = 0
            for i, value in enumerate(self._column(column)):
                if value is _MISSING or value == _UNKNOWN:  # a missing cell counts as unknown
                    unknown |= 1 << i
                elif isinstance(value, str):
                    index[value] = index.get(value, 0) | (1 << i)
            self._by_value[column] = index
            self._unknown[column] = unknown
        return index, self._unknown[column]

    def mask(self, column: str, value: str) -> int:
        """Rows satisfying ``column = value`` (fuzzy, time or exact, as the column requires)."""
        key = (column, value)
        cached = self._masks.get(key)
        if cached is not None:
            return cached
        index, unknown = self._column_index(column)
        result = unknown
        if column in ("arrive", "leave"):
            times = self._times.get(column)
            if times is None:
                times = self._times[column] = _TimeIndex(
                    [time_to_minutes("" if v is _MISSING else str(v)) for v in self._column(column)]
                )
            limit = time_to_minutes(value)
            result |= times.at_most(limit) if column == "arrive" else times.at_least(limit)
        elif column in self.fuzzy:
            for cell in fuzzy_candidates(value, list(index), FUZZY_RATIO):
                if fuzzy_match(cell, value, FUZZY_RATIO):
                    result |= index[cell]
        else:
            result |= index.get(value, 0)
        self._masks[key] = result
        return result


class VenueDatabase:
    """Query interface used by the Inform rule. Not shared between threads."""

    def __init__(self, tables: Mapping[str, list[dict[str, Any]]] | None = None) -> None:
        source = tables if tables is not None else {d: load_rows(d) for d in VENUE_DOMAINS}
        self._tables = {d: _Table(d, list(source.get(d, []))) for d in VENUE_DOMAINS}
        self._queries: dict[tuple[str, tuple[tuple[str, str], ...]], frozenset[str]] = {}

    def query(self, domain: str, constraints: Mapping[str, str]) -> frozenset[str]:
        """Ids of the venues matching ``constraints`` (slot -> value, normalised slot names)."""
        table = self._tables.get(domain)
        if table is None:
            return frozenset()
        items: list[tuple[str, str]] = []
        for column in sorted(table.columns):
            value = constraints.get(column)
            if value is None or value in DONTCARE:
                continue
            items.append((column, normalize_slot_value(column, value)))
        key = (domain, tuple(items))
        cached = self._queries.get(key)
        if cached is not None:
            return cached
        rows = table.all_rows
        for column, value in items:
            rows &= table.mask(column, value)
            if not rows:
                break
        ids: set[str] = set()
        while rows:
            lowest = rows & -rows
            ids.add(table.ids[lowest.bit_length() - 1])
            rows ^= lowest
        result = frozenset(ids)
        self._queries[key] = result
        return result
