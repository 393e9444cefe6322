"""JSON from untrusted text with a bounded nesting depth.

A model's output (tool-call arguments, replies), a system's HTTP answer and a prediction file
are parsed with :func:`loads`, which refuses documents nested deeper than
:data:`MAX_JSON_DEPTH` levels before the recursive parser (or any later recursive code, a
schema validator, ``json.dumps``) could hit Python's recursion limit. The error is a
:class:`json.JSONDecodeError`, so every caller that treats unparsable JSON as bad input (a
format violation, exit 3) treats too-deep JSON the same way, with the message
``nested deeper than 64 levels``.

:func:`check_depth` does the same for a value already parsed elsewhere (for example by an SDK).

JSON may escape lone UTF-16 surrogates (``"\ud800"``), which are not characters: a string
holding one cannot be written as UTF-8, so a record quoting it could not be saved. :func:`loads`
replaces each with U+FFFD (pairs become the character they encode); see
:func:`repair_surrogates`.
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
_NOT_QUOTE_OR_BRACKET = bytes(c for c in range(256) if c not in b'"[]{}')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    brackets = _outer_brackets(text)
    for _ in range(limit):
        if not brackets:
            return False
        shorter = _EMPTY_PAIR.sub("", brackets)
        if len(shorter) == len(brackets):  # unbalanced: let the parser judge
            return _parser_overflows(text)
        brackets = shorter
    return bool(brackets)


def _outer_brackets(text: str) -> str:
    """The brackets of ``text`` outside its strings, in order."""
    if "\\" in text:
        return _NOT_BRACKET.sub("", _STRING.sub("", text))
    # No escapes: a string runs from one quote to the next (or to the end). Only quotes and
    # brackets matter; two adjacent quotes delimit nothing outside a string (an empty string,
    # or the gap between two strings), so dropping them leaves the same brackets outside.
    kept = text.encode("utf-8", "surrogatepass").translate(None, _NOT_QUOTE_OR_BRACKET)
    return b"".join(kept.replace(b'""', b"").split(b'"')[0::2]).decode("ascii")


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
        value = json.loads(text)
    except RecursionError:
        raise JsonDepthError(text, limit) from None
    return repair_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


def _fix(text: str) -> str:
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def repair_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD and
    surrogate pairs joined; values without any come back as they are."""
    if isinstance(value, str):
        return _fix(value)
    if isinstance(value, list):
        return [repair_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {
            _fix(k) if isinstance(k, str) else k: repair_surrogates(v) for k, v in value.items()
        }
    return value


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
