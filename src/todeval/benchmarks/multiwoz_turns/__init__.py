"""``todeval run multiwoz-turns``: context-to-response generation on the MultiWOZ test set.

For each system turn of each test dialogue the model reads the gold history and writes the
delexicalised response, the dialogue state and the active domains as JSON; the predictions are
then scored by :mod:`todeval.scoring.multiwoz` (standard MultiWOZ evaluator rules). See
``docs/corpus-runs.md``. What the generation runs share is in :mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from todeval.registry import Registry

HELP = "generate MultiWOZ test responses and states from the gold history, then score them"


def register(registry: Registry) -> None:
    registry.profile(f"{__name__}.profile:PROFILE", benchmark="multiwoz-turns")
    registry.benchmark(
        "multiwoz-turns",
        HELP,
        cli="todeval.benchmarks.multiwoz_turns.cli",  # imported only when the command runs
        spec="todeval.benchmarks.multiwoz_turns.run:SPEC",
    )


__all__ = ["register"]
