"""Plug-in discovery: benchmarks and scorers add CLI commands without edits elsewhere.

A plug-in is any module that defines ``register(registry: Registry) -> None``. Built-in plug-ins
are the sub-modules of :mod:`todeval.benchmarks`, :mod:`todeval.scoring` and
:mod:`todeval.commands` (found by walking the packages); ``registry.add("top", ...)`` adds a
command directly under ``todeval`` (``todeval compare``); third-party plug-ins declare an entry
point in the ``todeval.plugins`` group::

    [project.entry-points."todeval.plugins"]
    mybench = "mypackage.todeval_plugin"

Each call to :func:`discover` builds a fresh registry (no global state).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Literal

Verb = Literal["run", "score", "data", "top"]
VERBS: tuple[Verb, ...] = ("run", "score", "data")  # "top": commands directly under todeval


@dataclass(frozen=True)
class Command:
    """One CLI sub-command, e.g. ``todeval run booking`` or ``todeval score multiwoz``."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


@dataclass
class Registry:
    commands: dict[Verb, dict[str, Command]] = field(
        default_factory=lambda: {verb: {} for verb in (*VERBS, "top")}
    )

    def add(self, verb: Verb, command: Command) -> None:
        existing = self.commands[verb]
        if command.name in existing:
            where = command.name if verb == "top" else f"{verb} {command.name}"
            raise ValueError(f"two plug-ins define 'todeval {where}'")
        existing[command.name] = command


_BUILTIN_PACKAGES = ("todeval.benchmarks", "todeval.scoring", "todeval.commands")


def discover() -> Registry:
    """Import every built-in and installed plug-in and let it register its commands."""
    registry = Registry()
    for package_name in _BUILTIN_PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{package_name}.{info.name}")
            register = getattr(module, "register", None)
            if callable(register):
                register(registry)
    for ep in entry_points(group="todeval.plugins"):
        module = ep.load()
        register = getattr(module, "register", None)
        if callable(register):
            register(registry)
    return registry
