"""``todeval run incar-turns``: context-to-response generation on the In-Car Assistant (KVRET).

For each assistant turn the model reads the gold history, the dialogue's intent and its
knowledge base, and writes the delexicalized response and the state as JSON; the predictions
are then scored by :mod:`todeval.scoring.incar` (Match, SuccF1, BLEU, Combined). See
``docs/corpus-runs.md``.
"""

from __future__ import annotations

from typing import Any

from todeval.registry import Command, Registry

HELP = "generate In-Car Assistant (KVRET) responses and states from the gold history, then score"


def _cli() -> Any:
    from todeval.benchmarks.incar_turns import cli  # imported only when the command runs

    return cli


def register(registry: Registry) -> None:
    registry.add(
        "run",
        Command(
            "incar-turns",
            HELP,
            lambda parser: _cli().add_arguments(parser),
            lambda args: int(_cli().run_command(args)),
        ),
    )


__all__ = ["register"]
