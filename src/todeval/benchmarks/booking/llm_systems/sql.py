"""A tiny parser for the SQL ``WHERE`` conditions of the ``autotod`` query tools.

Accepted: conditions ``column OP value`` joined by ``AND`` (any case), optionally preceded by
``WHERE``; ``OP`` is ``=``, ``==``, ``>=``, ``<=``, ``>`` or ``<``; a value is single- or
double-quoted (``''`` escapes a quote inside single quotes) or a bare word/number/time. An empty
condition (or ``1=1`` / ``true``) selects everything. Columns are those of the domain's DB tool;
comparisons other than ``=`` only where the tool takes an operator (stars, times). Values are
stripped and lower-cased, like the DB's own values.

Anything else (``OR``, ``LIKE``, parentheses, unknown columns, one column twice) raises
:class:`SqlWhereError`: the system passes such a query on as an invalid call.
"""

from __future__ import annotations

import re
from typing import Any

_CONDITION = re.compile(
    r"""\s*(?P<column>[A-Za-z_][A-Za-z_0-9]*)\s*
        (?P<op>>=|<=|==|=|>|<)\s*
        (?P<value>'(?:[^']|'')*'|"[^"]*"|[A-Za-z0-9_:.+\-]+)\s*""",
    re.VERBOSE,
)
_AND = re.compile(r"AND\b", re.IGNORECASE)
_WHERE = re.compile(r"^\s*WHERE\b", re.IGNORECASE)
_EVERYTHING = re.compile(r"^\s*(?:1\s*=\s*1|true)?\s*;?\s*$", re.IGNORECASE)


class SqlWhereError(ValueError):
    """A condition the translation does not support."""


def _unquote(value: str) -> str:
    if value.startswith("'"):
        return value[1:-1].replace("''", "'")
    if value.startswith('"'):
        return value[1:-1]
    return value


def parse_conditions(text: str) -> list[tuple[str, str, str]]:
    """``(column, operator, value)`` triples of a ``WHERE`` condition (column lower-cased)."""
    body = _WHERE.sub("", text, count=1).strip().rstrip(";").strip()
    if _EVERYTHING.match(body):
        return []
    out: list[tuple[str, str, str]] = []
    position = 0
    while True:
        match = _CONDITION.match(body, position)
        if match is None:
            raise SqlWhereError(f"cannot parse the condition at {body[position:]!r}")
        op = "=" if match["op"] == "==" else match["op"]
        out.append((match["column"].lower(), op, _unquote(match["value"]).strip().lower()))
        position = match.end()
        if position == len(body):
            return out
        joined = _AND.match(body, position)
        if joined is None:
            raise SqlWhereError(f"only AND is supported, found {body[position:]!r}")
        position = joined.end()


def where_to_arguments(text: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """Arguments of a DB tool (``parameters``: its JSON schema) for a ``WHERE`` condition."""
    properties: dict[str, Any] = parameters["properties"]
    arguments: dict[str, Any] = {}
    for column, op, value in parse_conditions(text):
        prop = properties.get(column)
        if prop is None:
            raise SqlWhereError(f"unknown column {column!r}; columns: {', '.join(properties)}")
        if column in arguments:
            raise SqlWhereError(f"column {column!r} is constrained twice")
        if prop.get("type") == "object":
            arguments[column] = {"operator": op, "value": value}
        elif op != "=":
            raise SqlWhereError(f"column {column!r} can only be compared with =")
        else:
            arguments[column] = value
    return arguments
