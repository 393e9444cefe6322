"""Export of the delexicalized In-Car gold (``todeval data incar --export``)."""

from __future__ import annotations

from typing import Any

from todeval.scoring.incar._gold import GoldSplit
from todeval.scoring.incar._ontology import INFORMABLE, REQUESTABLE


def gold_document(gold: GoldSplit) -> dict[str, Any]:
    """The full gold: ids, uuids, intents, and per turn user text, response and state."""
    return {
        "benchmark": "incar",
        "split": gold.split,
        "informable": {k: list(v) for k, v in INFORMABLE.items()},
        "requestable": {k: list(v) for k, v in REQUESTABLE.items()},
        "dialogues": {
            d.dialogue_id: {
                "uuid": d.uuid,
                "intent": d.intent,
                "turns": [t.model_dump() for t in d.turns],
            }
            for d in gold.dialogues
        },
    }


def gold_as_predictions(gold: GoldSplit) -> dict[str, list[dict[str, Any]]]:
    """The gold in the prediction format (a sanity check: it scores 100 on every metric)."""
    return {
        d.dialogue_id: [{"response": t.response, "state": dict(t.state)} for t in d.turns]
        for d in gold.dialogues
    }
