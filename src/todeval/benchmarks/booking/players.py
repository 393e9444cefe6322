"""Name -> player class for the booking benchmark (systems and user simulators).

Built-in players are named here; any other ``package.module:Class`` reference is imported on
demand, so users can plug in their own system without editing todeval.
"""

from __future__ import annotations

import importlib
from typing import Any

from todeval.benchmarks.booking.llm_systems import LLM_SYSTEMS
from todeval.errors import UsageError, choice_error

SYSTEMS: dict[str, str] = {
    "rule": "todeval.benchmarks.booking.systems.rule:RuleSystem",
    **LLM_SYSTEMS,
}
USERS: dict[str, str] = {
    "agenda": "todeval.benchmarks.booking.users.agenda:AgendaUser",
    "corpus": "todeval.benchmarks.booking.users.corpus:CorpusUser",
    "llm": "todeval.benchmarks.booking.llm_user:LLMUser",
}


def _import(reference: str) -> Any:
    module_name, _, attr = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load player {reference!r}: {exc}") from None


def resolve(kind: str, name: str, table: dict[str, str]) -> Any:
    """The class for a built-in name or a ``package.module:Class`` reference."""
    if name in table:
        return _import(table[name])
    if ":" in name:
        return _import(name)
    raise choice_error(kind, name, [*table, "package.module:Class"])


def system_class(name: str) -> Any:
    return resolve("system", name, SYSTEMS)


def user_class(name: str) -> Any:
    return resolve("user simulator", name, USERS)
