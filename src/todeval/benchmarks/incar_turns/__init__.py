"""``todeval run incar-turns``: context-to-response generation on the In-Car Assistant (KVRET).

For each assistant turn the model reads the gold history, the dialogue's intent and its
knowledge base, and writes the delexicalized response and the state as JSON; the predictions
are then scored by :mod:`todeval.scoring.incar` (Match, SuccF1, BLEU, Combined). See
``docs/corpus-runs.md``. What the generation runs share is in :mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from todeval.benchmarks._turns.plugin import run_plugin

HELP = "generate In-Car Assistant (KVRET) responses and states from the gold history, then score"

# the CLI module is imported only when the command runs
register = run_plugin("incar-turns", HELP, "todeval.benchmarks.incar_turns.cli")

__all__ = ["register"]
