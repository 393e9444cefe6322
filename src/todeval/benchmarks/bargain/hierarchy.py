"""The intent hierarchy of second-hand marketplace bargaining: parent -> intent -> action -> tool.

A hierarchy is a versioned JSON file (package data: ``data/bargain/intents/hierarchy-v1.json``)
with four lists, every entry carrying an ``id`` unique across the whole file:

* ``parents``: the handful of groups intents are scored under (price, product facts, ...);
* ``intents``: what a buyer's turn is doing -- the unit the scripted track scores; each names
  its ``parent``, the ``actions`` a seller would take, and example utterances;
* ``actions``: what a seller does about an intent, each with the ``tools`` it needs;
* ``tools``: atomic, checkable operations (``API_QueryShippingPolicy``) with an argument schema.

:func:`validate` refuses duplicate ids, intents of an unknown parent, actions or tools that
nothing reaches, and references to ids that do not exist. Intent Factory writes the same format.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.errors import BadInputError, first_problem

DEFAULT_HIERARCHY = "hierarchy-v1.json"


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, pattern=r"^[A-Za-z][A-Za-z0-9_.\-]*$")
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)


class Parent(_Entry):
    """A group of intents (``price``, ``logistics``, ...)."""


class Tool(_Entry):
    """An atomic operation a seller agent can call; ``arguments`` is a JSON schema."""

    arguments: dict[str, Any] = Field(default_factory=dict)


class Action(_Entry):
    """What a seller does about an intent, with the tools it needs."""

    tools: tuple[str, ...] = ()


class Intent(_Entry):
    """What a buyer's turn does; scored at this level."""

    parent: str
    actions: tuple[str, ...] = Field(min_length=1)
    examples: tuple[str, ...] = ()


class Hierarchy(BaseModel):
    """A whole hierarchy file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str
    description: str = ""
    sources: tuple[str, ...] = ()
    parents: tuple[Parent, ...]
    intents: tuple[Intent, ...]
    actions: tuple[Action, ...]
    tools: tuple[Tool, ...]

    @property
    def intent_ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.intents)

    def intent(self, intent_id: str) -> Intent:
        for i in self.intents:
            if i.id == intent_id:
                return i
        raise KeyError(intent_id)

    def labels(self) -> dict[str, str]:
        """Intent id -> its description: the label space the scripted track scores."""
        return {i.id: f"{i.name}: {i.description}" for i in self.intents}

    def parent_of(self) -> dict[str, str]:
        return {i.id: i.parent for i in self.intents}

    def siblings(self, intent_id: str) -> list[str]:
        """The other intents under the same parent, in file order."""
        parent = self.parent_of()[intent_id]
        return [i.id for i in self.intents if i.parent == parent and i.id != intent_id]

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of the hierarchy (first 16 hex digits)."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def problems(h: Hierarchy) -> list[str]:
    """Everything wrong with a hierarchy, one line each (empty when it is valid)."""
    out: list[str] = []
    ids = Counter(e.id for group in (h.parents, h.intents, h.actions, h.tools) for e in group)
    out += [f"id {i!r} is used {n} times" for i, n in sorted(ids.items()) if n > 1]
    parents = {p.id for p in h.parents}
    actions = {a.id for a in h.actions}
    tools = {t.id for t in h.tools}
    used_parents: set[str] = set()
    used_actions: set[str] = set()
    for intent in h.intents:
        if intent.parent not in parents:
            out.append(f"intent {intent.id!r}: unknown parent {intent.parent!r}")
        used_parents.add(intent.parent)
        for a in intent.actions:
            if a not in actions:
                out.append(f"intent {intent.id!r}: unknown action {a!r}")
            used_actions.add(a)
    reachable_tools: set[str] = set()
    for action in h.actions:
        for t in action.tools:
            if t not in tools:
                out.append(f"action {action.id!r}: unknown tool {t!r}")
            if action.id in used_actions:
                reachable_tools.add(t)
    out += [f"parent {p!r} has no intent" for p in sorted(parents - used_parents)]
    out += [f"action {a!r} belongs to no intent (orphan)" for a in sorted(actions - used_actions)]
    out += [f"tool {t!r} is reachable from no intent" for t in sorted(tools - reachable_tools)]
    return out


def validate(h: Hierarchy, where: str = "hierarchy") -> Hierarchy:
    """``h`` if it is valid, else :class:`BadInputError` naming the first problem."""
    found = problems(h)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise BadInputError(f"{where}: {found[0]}{more}")
    return h


def parse_hierarchy(text: str, where: str) -> Hierarchy:
    """A validated hierarchy from JSON text; :class:`BadInputError` with one line if invalid."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{where}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise BadInputError(f"{where}: JSON nested too deeply") from None
    try:
        h = Hierarchy.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(f"{where}: invalid hierarchy at {first_problem(exc)}") from None
    return validate(h, where)


def load_hierarchy(path: str | Path) -> Hierarchy:
    """A hierarchy file from disk."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read hierarchy {path}: {exc}") from None
    return parse_hierarchy(text, str(path))


def package_text(name: str) -> str:
    """A text file of ``data/bargain/intents/`` in the installed package."""
    node = resources.files("todeval") / "data" / "bargain" / "intents" / name
    try:
        return node.read_text(encoding="utf-8")
    except FileNotFoundError:  # pragma: no cover - a broken install
        raise BadInputError(f"bargain package data missing: intents/{name}") from None


@cache
def default_hierarchy() -> Hierarchy:
    """The shipped hierarchy (``hierarchy-v1.json``)."""
    return parse_hierarchy(package_text(DEFAULT_HIERARCHY), f"intents/{DEFAULT_HIERARCHY}")


__all__ = [
    "DEFAULT_HIERARCHY",
    "Action",
    "Hierarchy",
    "Intent",
    "Parent",
    "Tool",
    "default_hierarchy",
    "load_hierarchy",
    "package_text",
    "parse_hierarchy",
    "problems",
    "validate",
]
