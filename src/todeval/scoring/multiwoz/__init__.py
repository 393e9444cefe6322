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

from todeval.registry import Command, Registry
from todeval.scoring.multiwoz._cli import HELP, add_arguments, format_table, run
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
from todeval.scoring.multiwoz.profile import SCORE_PROFILE

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
    registry.profile(SCORE_PROFILE)
    registry.add("score", Command(name="multiwoz", help=HELP, add_arguments=add_arguments, run=run))
