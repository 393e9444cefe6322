"""``todeval run multiwoz-turns``: context-to-response generation on the MultiWOZ test set.

For each system turn of each test dialogue the model reads the gold history and writes the
delexicalised response, the dialogue state and the active domains as JSON; the predictions are
then scored by :mod:`todeval.scoring.multiwoz` (standard MultiWOZ evaluator rules). See
``docs/corpus-runs.md``. What the generation runs share is in :mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from todeval.benchmarks._turns.plugin import run_plugin

HELP = "generate MultiWOZ test responses and states from the gold history, then score them"

# the CLI module is imported only when the command runs
register = run_plugin("multiwoz-turns", HELP, "todeval.benchmarks.multiwoz_turns.cli")

__all__ = ["register"]
