"""The snooper: a player that reads everything it is handed, to prove an information boundary.

A benchmark's boundary test plays :class:`Snooper` (mixed into a player of the role under test)
and then asks :func:`leaks` whether any secret of the task (node texts, gold labels, goal values
not yet said) occurs anywhere in what the player was handed: its options, its start context,
every observation. The walk is recursive over every attribute, mapping, sequence, dataclass and
pydantic model it can reach (cycles cut), so nothing hidden in a nested object escapes it.
Callables and backends are not entered: a model backend's client is the player's own tool.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

_SKIP_TYPES = (random.Random, type)
_MAX_DEPTH = 40


def texts_in(obj: object) -> Iterator[str]:
    """Every string and number (as text) reachable from ``obj``: attributes, mappings (keys and
    values), sequences, sets, dataclasses, pydantic models (fields, extras and properties are
    not called: properties only read what the fields hold)."""
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(obj, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            yield item
            continue
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, int | float):
            yield repr(item)
            continue
        if isinstance(item, bytes):
            yield item.decode("utf-8", "replace")
            continue
        if isinstance(item, enum.Enum):
            stack.append((item.value, depth + 1))
            continue
        if id(item) in seen or depth > _MAX_DEPTH or isinstance(item, _SKIP_TYPES):
            continue
        seen.add(id(item))
        stack.extend((child, depth + 1) for child in _children(item))


def _children(item: object) -> Iterable[object]:
    if isinstance(item, Mapping):
        return [x for kv in item.items() for x in kv]
    if isinstance(item, list | tuple | set | frozenset):
        return list(item)
    if isinstance(item, BaseModel):
        return [getattr(item, name) for name in type(item).model_fields] + list(
            (item.model_extra or {}).values()
        )
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return [getattr(item, f.name) for f in dataclasses.fields(item)]
    if callable(item) and not hasattr(item, "__dict__"):
        return []
    attrs = getattr(item, "__dict__", None)
    slots = [getattr(item, s) for s in getattr(type(item), "__slots__", ()) if hasattr(item, s)]
    return [*(attrs.values() if isinstance(attrs, dict) else ()), *slots]


def objects_in(obj: object) -> list[object]:
    """Every object reachable from ``obj`` (not the strings and numbers): for ``isinstance``
    checks -- was a task, an answer key, a fitted model handed over anywhere?"""
    seen: set[int] = set()
    out: list[object] = []
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, str | int | float | bytes) or item is None:
            continue
        seen.add(id(item))
        out.append(item)
        stack.extend(_children(item))
    return out


def leaks(handed: Iterable[object], secrets: Iterable[str], *, min_length: int = 1) -> list[str]:
    """The secrets (case-insensitive, at least ``min_length`` characters) that occur inside any
    text reachable from ``handed``: an empty list means the boundary held."""
    corpus = "\n".join(t.lower() for obj in handed for t in texts_in(obj))
    wanted = {s for s in secrets if len(s.strip()) >= min_length}
    return sorted(s for s in wanted if s.lower().strip() in corpus)


@dataclasses.dataclass
class Snooped:
    """What one snooper instance was handed, in order."""

    options: object = None
    context: object = None
    observations: list[object] = dataclasses.field(default_factory=list)

    def everything(self) -> list[object]:
        return [self.options, self.context, *self.observations]


class Snooper:
    """Mix-in for a test player: records the options it was built with, its start context and
    every observation into ``self.snooped`` (and into :attr:`journal`, a list the test reads:
    set it on the class before the run, e.g. ``MySnooper.journal = []``)."""

    journal: list[Snooped] | None = None

    def __init__(self, options: object = None) -> None:
        self.snooped = Snooped(options=options)
        if type(self).journal is not None:
            type(self).journal.append(self.snooped)  # type: ignore[union-attr]

    @classmethod
    def from_options(cls, options: Any) -> Snooper:
        return cls(options)

    async def start(self, context: object) -> None:
        self.snooped.context = context

    def saw(self, observation: object) -> None:
        self.snooped.observations.append(observation)


__all__ = ["Snooped", "Snooper", "leaks", "objects_in", "texts_in"]
