"""``todeval run multiwoz-turns``: context-to-response generation on the MultiWOZ test set.

For each system turn of each test dialogue the model reads the gold history and writes the
delexicalised response, the dialogue state and the active domains as JSON; the predictions are
then scored by :mod:`todeval.scoring.multiwoz` (standard MultiWOZ evaluator rules). See
``docs/corpus-runs.md``. The ``shared`` sub-package is also used by ``incar-turns``.
"""

from __future__ import annotations

from typing import Any

from todeval.registry import Command, Registry

HELP = "generate MultiWOZ test responses and states from the gold history, then score them"


def _cli() -> Any:
    from todeval.benchmarks.multiwoz_turns import cli  # imported only when the command runs

    return cli


def register(registry: Registry) -> None:
    registry.add(
        "run",
        Command(
            "multiwoz-turns",
            HELP,
            lambda parser: _cli().add_arguments(parser),
            lambda args: int(_cli().run_command(args)),
        ),
    )


__all__ = ["register"]
