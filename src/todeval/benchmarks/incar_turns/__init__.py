"""``todeval run incar-turns``: context-to-response generation on the In-Car Assistant (KVRET).

For each assistant turn the model reads the gold history, the dialogue's intent and its
knowledge base, and writes the delexicalized response and the state as JSON; the predictions
are then scored by :mod:`todeval.scoring.incar` (Match, SuccF1, BLEU, Combined). See
``docs/corpus-runs.md``. What the generation runs share is in :mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from todeval.registry import Registry

HELP = "generate In-Car Assistant (KVRET) responses and states from the gold history, then score"


def register(registry: Registry) -> None:
    registry.profile(f"{__name__}.profile:PROFILE", benchmark="incar-turns")
    registry.benchmark(
        "incar-turns",
        HELP,
        cli="todeval.benchmarks.incar_turns.cli",  # imported only when the command runs
        spec="todeval.benchmarks.incar_turns.run:SPEC",
    )


__all__ = ["register"]
