"""JSON from untrusted text with a bounded nesting depth.

A model's output (tool-call arguments, replies), a system's HTTP answer and a prediction file
are parsed with :func:`loads`, which refuses documents nested deeper than
:data:`MAX_JSON_DEPTH` levels before the recursive parser (or any later recursive code, a
schema validator, ``json.dumps``) could hit Python's recursion limit. The error is a
:class:`json.JSONDecodeError`, so every caller that treats unparsable JSON as bad input (a
format violation, exit 3) treats too-deep JSON the same way, with the message
``nested deeper than 64 levels``.

:func:`check_depth` does the same for a value already parsed elsewhere (for example by an SDK).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
"""Most nested arrays/objects accepted in any model output or input file (``[[1]]`` is 2)."""

# a string, or an unterminated one up to the end (linear: never rescanned from a later quote)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_EMPTY_PAIR = re.compile(r"\[\]|\{\}")


class JsonDepthError(json.JSONDecodeError):
    """The document is nested deeper than the limit."""

    def __init__(self, doc: str, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels", doc, 0)
        self.limit = limit

    def __str__(self) -> str:
        return self.msg


def depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the brackets outside strings in ``text`` nest deeper than ``limit``.

    Linear in ``len(text)`` and done by the regex engine: strings are removed, then empty
    ``[]``/``{}`` pairs are removed once per level, at most ``limit + 1`` rounds. Unbalanced
    brackets (not JSON anyway) count as deep only if the parser accepts the text."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        if not brackets:
            return False
        shorter = _EMPTY_PAIR.sub("", brackets)
        if len(shorter) == len(brackets):  # unbalanced: let the parser judge
            return _parser_overflows(text)
        brackets = shorter
    return bool(brackets)


def _parser_overflows(text: str) -> bool:
    try:
        json.loads(text)
    except RecursionError:
        return True
    except ValueError:
        return False
    return False


def loads(text: str | bytes, *, limit: int = MAX_JSON_DEPTH) -> Any:
    """:func:`json.loads` refusing documents nested deeper than ``limit`` levels.

    Raises :class:`json.JSONDecodeError` (:class:`JsonDepthError` for depth) for every input,
    never :class:`RecursionError`."""
    if isinstance(text, bytes | bytearray):
        text = text.decode(json.detect_encoding(text), "surrogatepass")  # as json.loads does
    if depth_exceeds(text, limit):
        raise JsonDepthError(text, limit)
    try:
        return json.loads(text)
    except RecursionError:
        raise JsonDepthError(text, limit) from None


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`JsonDepthError` if the parsed ``value`` nests lists/dicts deeper than
    ``limit`` (iterative: safe for any depth)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth > limit:
            raise JsonDepthError("", limit)
        stack.extend((child, depth + 1) for child in children)
