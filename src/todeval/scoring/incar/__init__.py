"""In-Car Assistant (KVRET/SMD) corpus scoring: Match, SuccF1, BLEU and Combined.

Public API::

    from todeval.scoring.incar import evaluate
    result = evaluate({"0": [{"response": "...", "state": {"event": "meeting"}}]}, split="test")
    result.match, result.succ_f1, result.bleu, result.combined_lineage, result.summary

CLI: ``todeval score incar PRED.json [--split test|dev] [-o OUT.json]`` and
``todeval data incar [--export [--predictions-format] -o FILE] [--split test|dev]``;
``todeval score incar --from sequicity results/kvret.csv`` reads Sequicity output.
The rules and their divergences from the original evaluator are in ``docs/scoring-incar.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes
from todeval.registry import Registry

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from todeval.scoring.incar._evaluate import (
        METRICS,
        DialogueScore,
        IncarResult,
        evaluate,
        score_predictions,
    )
    from todeval.scoring.incar._export import gold_as_predictions, gold_document
    from todeval.scoring.incar._gold import (
        SPLITS,
        GoldDialogue,
        GoldSplit,
        GoldTurn,
        Split,
        load_gold,
    )
    from todeval.scoring.incar._ontology import INFORMABLE, REQUESTABLE, Lexicon, load_lexicon
    from todeval.scoring.incar._predictions import (
        MAX_RESPONSE_CHARS,
        MAX_STATE_CHARS,
        IncarPredictions,
        PredictedTurn,
        parse_predictions,
    )
    from todeval.scoring.incar._report import format_table
    from todeval.scoring.incar._text import normalize

_EXPORTS = {
    "MAX_RESPONSE_CHARS": "_predictions",
    "MAX_STATE_CHARS": "_predictions",
    "METRICS": "_evaluate",
    "DialogueScore": "_evaluate",
    "IncarResult": "_evaluate",
    "evaluate": "_evaluate",
    "score_predictions": "_evaluate",
    "gold_as_predictions": "_export",
    "gold_document": "_export",
    "SPLITS": "_gold",
    "GoldDialogue": "_gold",
    "GoldSplit": "_gold",
    "GoldTurn": "_gold",
    "Split": "_gold",
    "load_gold": "_gold",
    "INFORMABLE": "_ontology",
    "REQUESTABLE": "_ontology",
    "Lexicon": "_ontology",
    "load_lexicon": "_ontology",
    "IncarPredictions": "_predictions",
    "PredictedTurn": "_predictions",
    "parse_predictions": "_predictions",
    "format_table": "_report",
    "normalize": "_text",
}


__getattr__ = lazy_attributes(globals(), _EXPORTS, relative=True)


__all__ = [
    "INFORMABLE",
    "MAX_RESPONSE_CHARS",
    "MAX_STATE_CHARS",
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


SCORE_HELP = "score In-Car Assistant (KVRET) predictions: Match, SuccF1, BLEU, Combined"
DATA_HELP = "show or export the delexicalized In-Car Assistant (KVRET) gold"


def register(registry: Registry) -> None:
    """Add ``todeval score incar`` and ``todeval data incar``."""
    registry.profile(f"{__name__}.profile:SCORE_PROFILE", benchmark="incar")
    cli = f"{__name__}._cli"
    registry.lazy("score", "incar", SCORE_HELP, cli, add="add_score_arguments", run="run_score")
    registry.lazy("data", "incar", DATA_HELP, cli, add="add_data_arguments", run="run_data")
    registry.controls("incar", f"{__name__}.controls:SUITE")
