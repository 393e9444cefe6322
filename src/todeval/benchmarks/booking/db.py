"""The venue databases the game master searches (one per task set).

Rows are loaded into an in-memory SQLite database; every value is bound as an SQL parameter and
column names come from a fixed whitelist, so no text from a model ever becomes SQL. Rows are
normalised like the tasks (lower-case keys and values, ``guest house`` -> ``guesthouse``,
``free`` -> ``yes`` for parking and internet, train ids upper-case). :func:`original_database`
holds the rows as clem:todd's released code holds them (``--protocol clemtodd``).

Query semantics (the clem:todd protocol): filters are ANDed; empty and ``dontcare``-like values
are ignored; ``stars`` and the train times accept an operator (``=``, ``>=``, ``<=``, ``>``,
``<``); at most :data:`MAX_ROWS` rows are returned together with the total count.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from todeval.benchmarks.booking.schema import INFORMABLE, OPERATORS
from todeval.benchmarks.booking.tasks import (
    BOOKING_DOMAINS,
    normalise_key,
    normalise_value,
    read_json,
)

MAX_ROWS = 5
_DROPPED = ("id", "location", "introduction", "signature")
DONTCARE = frozenset({"", "dontcare", "dont care", "don't care", "do not care", "any", "none"})
_DB_DIRS = {
    "test": ("multiwoz", "db"),
    "dev": ("multiwoz", "db"),
    "synthetic": ("multiwoz", "booking_tasks", "synthetic_db"),
    "unrealistic": ("multiwoz", "booking_tasks", "unrealistic_db"),
}


@dataclass(frozen=True)
class Condition:
    column: str
    operator: str
    value: str


@dataclass(frozen=True)
class QueryResult:
    total: int
    rows: list[dict[str, str]]
    conditions: list[Condition]


def _normalise_row(raw: dict[str, Any]) -> dict[str, str]:
    row: dict[str, str] = {}
    for key, value in raw.items():
        if isinstance(value, (dict, list)) or value is None:
            continue
        k = normalise_key(key)
        if k in _DROPPED:
            continue
        row[k] = normalise_value(k, value)
    return row


def _quoted(name: str) -> str:
    """An identifier for inside double quotes (a pack's column may hold any character)."""
    return name.replace('"', '""')


def conditions_from(
    domain: str,
    constraints: dict[str, Any],
    *,
    exact_times: bool = False,
    informable: Mapping[str, tuple[str, ...]] = INFORMABLE,
    normalise: Callable[[str, Any], str] = normalise_value,
) -> list[Condition]:
    """Turn tool arguments into conditions, dropping empty/dontcare values and unknown slots
    (``informable``: MultiWOZ's unless a domain pack's world gives its own).

    A value may be a string (equality) or ``{"operator": op, "value": v}``.
    """
    allowed = informable.get(domain, ())
    out: list[Condition] = []
    for key, raw in constraints.items():
        column = normalise_key(key)
        if column not in allowed:
            continue
        operator = "="
        value: Any = raw
        if isinstance(raw, dict):
            operator = str(raw.get("operator", "=")).strip() or "="
            value = raw.get("value", "")
        text = normalise(column, value)
        if text in DONTCARE:
            continue
        if operator not in OPERATORS:
            operator = "="
        out.append(Condition(column, operator, text))
    return out


class VenueDatabase:
    """The restaurant, hotel and train tables of one task set."""

    def __init__(
        self,
        name: str,
        tables: dict[str, list[dict[str, Any]]],
        *,
        informable: Mapping[str, tuple[str, ...]] = INFORMABLE,
        normalise_row: Callable[[dict[str, Any]], dict[str, str]] | None = _normalise_row,
        normalise_value: Callable[[str, Any], str] = normalise_value,
        numeric: frozenset[str] = frozenset(),
    ) -> None:
        """``tables``: rows per entity. MultiWOZ's rows are normalised here; a domain pack's
        come normalised (``normalise_row=None``) with its own slots and value normaliser;
        ``numeric`` columns compare as whole numbers (a pack's integer slots)."""
        self.name = name
        self.numeric = numeric
        self.informable = informable
        self.normalise_value = normalise_value
        self._rows: dict[str, list[dict[str, str]]] = {}
        self._columns: dict[str, list[str]] = {}
        self._values: dict[tuple[str, str], tuple[str, ...]] = {}
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        for domain, raw_rows in tables.items():
            rows = [
                normalise_row(r) if normalise_row is not None else {k: str(v) for k, v in r.items()}
                for r in raw_rows
            ]
            columns = sorted({c for r in rows for c in r})
            self._rows[domain] = rows
            self._columns[domain] = columns
            cols_sql = ", ".join(f'"{_quoted(c)}" TEXT' for c in columns)
            self._conn.execute(f'CREATE TABLE "{domain}" (rowid_ INTEGER PRIMARY KEY, {cols_sql})')
            placeholders = ", ".join("?" for _ in columns)
            col_names = ", ".join(f'"{_quoted(c)}"' for c in columns)
            self._conn.executemany(
                f'INSERT INTO "{domain}" (rowid_, {col_names}) VALUES (?, {placeholders})',
                [(i, *(r.get(c) for c in columns)) for i, r in enumerate(rows)],
            )

    @property
    def domains(self) -> list[str]:
        return list(self._rows)

    def rows(self, domain: str) -> list[dict[str, str]]:
        """All rows of a table (normalised copies)."""
        return [dict(r) for r in self._rows.get(domain, [])]

    def values(self, domain: str, column: str) -> list[str]:
        """Distinct values of one column, sorted (worked out once: the tables never change)."""
        key = (domain, column)
        if key not in self._values:
            rows = self._rows.get(domain, [])
            self._values[key] = tuple(sorted({r[column] for r in rows if column in r}))
        return list(self._values[key])

    def select(self, domain: str, conditions: list[Condition]) -> list[dict[str, str]]:
        """All rows matching every condition, in table order."""
        return self.select_first(domain, conditions, None)[1]

    def count(self, domain: str, conditions: list[Condition]) -> int:
        """How many rows match every condition."""
        return self.select_first(domain, conditions, 0)[0]

    def select_first(
        self, domain: str, conditions: list[Condition], limit: int | None
    ) -> tuple[int, list[dict[str, str]]]:
        """How many rows match every condition, and the first ``limit`` of them (all with
        None), in table order: copies of only the rows returned."""
        if domain not in self._rows:
            return 0, []
        clauses: list[str] = []
        params: list[str] = []
        for cond in conditions:
            if cond.column not in self._columns[domain]:
                return 0, []
            column = f'"{_quoted(cond.column)}"'
            if cond.column in self.numeric and cond.value.isdigit():
                column, value = f"CAST({column} AS INTEGER)", "CAST(? AS INTEGER)"
            else:
                value = "?"
            clauses.append(f"{column} {cond.operator} {value}")
            params.append(cond.value)
        where = " AND ".join(clauses) if clauses else "1"
        cursor = self._conn.execute(
            f'SELECT rowid_ FROM "{domain}" WHERE {where} ORDER BY rowid_', params
        )
        found = cursor.fetchall()
        table = self._rows[domain]
        return len(found), [dict(table[i]) for (i,) in found[:limit]]

    def conditions(self, domain: str, constraints: dict[str, Any]) -> list[Condition]:
        """:func:`conditions_from` with this database's slots and normaliser."""
        return conditions_from(
            domain, constraints, informable=self.informable, normalise=self.normalise_value
        )

    def query(self, domain: str, constraints: dict[str, Any]) -> QueryResult:
        """A DB tool call: at most :data:`MAX_ROWS` rows and the total count."""
        conditions = self.conditions(domain, constraints)
        total, rows = self.select_first(domain, conditions, MAX_ROWS)
        return QueryResult(total=total, rows=rows, conditions=conditions)


@cache
def load_database(task_set: str) -> VenueDatabase:
    """The shipped database a task set is played against (shared, read-only)."""
    parts = _DB_DIRS[task_set]
    tables = {d: read_json(*parts, f"{d}_db.json") for d in BOOKING_DOMAINS}
    return VenueDatabase(task_set, tables)


ORIGINAL_NAMES = {
    "ask restaurant": "ask",
    "meze bar": "meze bar restaurant",
    "pizza express fen ditton": "pizza express Fen Ditton",
}
"""MultiWOZ's restaurants whose name in clem:todd's SQLite database (kranti-up/clemtoddfw @
bfefff79, ``resources/data/en/multiwoz/restaurant-dbase.db``) is not the JSON's lower-cased:
the JSON name (lower-cased) -> the original's. ``Fen Ditton`` keeps its capitals there, so the
original's lower-cased searches and bookings never match it."""


def _original_row(raw: dict[str, Any]) -> dict[str, str]:
    """A row as the original's SQLite holds it: lower-cased, nothing mapped (``free``, ``8:00``
    and ``guest house`` stay), train ids upper-case."""
    row: dict[str, str] = {}
    for key, value in raw.items():
        k = normalise_key(key)
        if isinstance(value, (dict, list)) or value is None or k in _DROPPED:
            continue
        text = str(value).strip()
        row[k] = text.upper() if k == "trainid" else text.lower()
    if "name" in row:
        row["name"] = ORIGINAL_NAMES.get(row["name"], row["name"])
    return row


@cache
def original_database(task_set: str) -> VenueDatabase:
    """The database clem:todd's released code plays a task set against (``--protocol
    clemtodd``): the shipped rows lower-cased as they are, without todeval's value mapping, and
    MultiWOZ's three restaurants under the original's names (:data:`ORIGINAL_NAMES`). The test
    and unrealistic rows are :func:`load_database`'s but for those names; the synthetic set's
    keep ``free`` parking and internet and ``8:00`` arrivals; dev's are test's."""
    parts = _DB_DIRS[task_set]
    tables = {d: read_json(*parts, f"{d}_db.json") for d in BOOKING_DOMAINS}
    return VenueDatabase(task_set, tables, normalise_row=_original_row)
