"""Registering a generation run as ``todeval run <name>`` without importing it at start-up."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from todeval.registry import Command, Registry


def lazy_run_command(name: str, help: str, cli_module: str) -> Command:
    """A ``run`` command whose CLI module (``add_arguments``, ``run_command``) is imported only
    when the command is used."""

    def cli() -> Any:
        return importlib.import_module(cli_module)

    return Command(
        name,
        help,
        lambda parser: cli().add_arguments(parser),
        lambda args: int(cli().run_command(args)),
    )


def run_plugin(name: str, help: str, cli_module: str) -> Callable[[Registry], None]:
    """The ``register`` function of a plug-in package that adds ``todeval run <name>``."""

    def register(registry: Registry) -> None:
        registry.add("run", lazy_run_command(name, help, cli_module))

    return register
