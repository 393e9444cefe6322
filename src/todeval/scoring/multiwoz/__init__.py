"""MultiWOZ corpus scoring (``todeval score multiwoz``) under the standard evaluator's rules.

Public API::

    from todeval.scoring.multiwoz import evaluate, to_summary

    result = evaluate("augpt.json.gz")               # MultiwozResult (pydantic)
    summary = to_summary(result)                     # Summary with bootstrap CIs

Scores: Inform, Success, BLEU (sacrebleu, MultiWOZ 2.2 references), Combined, lexical richness
and DST. The scheme is recorded as :data:`SCHEME` in every result. Heavy libraries are imported
only when scoring runs, so importing this package (and plug-in discovery) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes
from todeval.registry import Registry

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from todeval.scoring.multiwoz._cli import format_table
    from todeval.scoring.multiwoz._corpus import CorpusData
    from todeval.scoring.multiwoz._database import VenueDatabase
    from todeval.scoring.multiwoz._evaluate import evaluate
    from todeval.scoring.multiwoz._models import (
        SCHEME,
        DomainRates,
        DstScores,
        MultiwozResult,
        PredictedTurn,
        RichnessScores,
    )
    from todeval.scoring.multiwoz._summary import MultiwozSummary, to_summary

_EXPORTS = {
    "format_table": "_cli",
    "CorpusData": "_corpus",
    "VenueDatabase": "_database",
    "evaluate": "_evaluate",
    "SCHEME": "_models",
    "DomainRates": "_models",
    "DstScores": "_models",
    "MultiwozResult": "_models",
    "PredictedTurn": "_models",
    "RichnessScores": "_models",
    "MultiwozSummary": "_summary",
    "to_summary": "_summary",
}

HELP = "score MultiWOZ test-set predictions (Inform, Success, BLEU, Combined, richness, DST)"


__getattr__ = lazy_attributes(globals(), _EXPORTS, relative=True)


__all__ = [
    "SCHEME",
    "CorpusData",
    "DomainRates",
    "DstScores",
    "MultiwozResult",
    "MultiwozSummary",
    "PredictedTurn",
    "RichnessScores",
    "VenueDatabase",
    "evaluate",
    "format_table",
    "register",
    "to_summary",
]


def register(registry: Registry) -> None:
    """Add ``todeval score multiwoz``."""
    registry.profile(f"{__name__}.profile:SCORE_PROFILE", benchmark="multiwoz")
    registry.lazy("score", "multiwoz", HELP, f"{__name__}._cli", run="run")
    registry.controls("multiwoz", f"{__name__}.controls:SUITE")
