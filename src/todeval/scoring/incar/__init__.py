"""In-Car Assistant (KVRET/SMD) corpus scoring: Match, SuccF1, BLEU and Combined.

Public API::

    from todeval.scoring.incar import evaluate
    result = evaluate({"0": [{"response": "...", "state": {"event": "meeting"}}]}, split="test")
    result.match, result.succ_f1, result.bleu, result.combined_lineage, result.summary

CLI: ``todeval score incar PRED.json [--split test|dev] [-o OUT.json]`` and
``todeval data incar [--export [--predictions-format] -o FILE] [--split test|dev]``.
The rules and their divergences from the original evaluator are in ``docs/scoring-incar.md``.
"""

from __future__ import annotations

from todeval.registry import Command, Registry
from todeval.scoring.incar._cli import (
    DATA_HELP,
    SCORE_HELP,
    add_data_arguments,
    add_score_arguments,
    run_data,
    run_score,
)
from todeval.scoring.incar._evaluate import (
    METRICS,
    DialogueScore,
    IncarResult,
    evaluate,
    score_predictions,
)
from todeval.scoring.incar._export import gold_as_predictions, gold_document
from todeval.scoring.incar._gold import SPLITS, GoldDialogue, GoldSplit, GoldTurn, Split, load_gold
from todeval.scoring.incar._ontology import INFORMABLE, REQUESTABLE, Lexicon, load_lexicon
from todeval.scoring.incar._predictions import IncarPredictions, PredictedTurn, parse_predictions
from todeval.scoring.incar._report import format_table
from todeval.scoring.incar._text import normalize
from todeval.scoring.incar.profile import SCORE_PROFILE

__all__ = [
    "INFORMABLE",
    "METRICS",
    "REQUESTABLE",
    "SPLITS",
    "DialogueScore",
    "GoldDialogue",
    "GoldSplit",
    "GoldTurn",
    "IncarPredictions",
    "IncarResult",
    "Lexicon",
    "PredictedTurn",
    "Split",
    "evaluate",
    "format_table",
    "gold_as_predictions",
    "gold_document",
    "load_gold",
    "load_lexicon",
    "normalize",
    "parse_predictions",
    "register",
    "score_predictions",
]


def register(registry: Registry) -> None:
    """Add ``todeval score incar`` and ``todeval data incar``."""
    registry.profile(SCORE_PROFILE)
    registry.add("score", Command("incar", SCORE_HELP, add_score_arguments, run_score))
    registry.add("data", Command("incar", DATA_HELP, add_data_arguments, run_data))
