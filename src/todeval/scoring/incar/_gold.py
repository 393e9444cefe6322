"""The delexicalized In-Car gold: one turn per system reply, with the gold constraints.

Dialogue ids are the 0-based position of the dialogue in the split file, as a decimal string
(``"0"`` … ``"303"`` for test), the ``dial_id`` the lineage uses; each dialogue also carries the
dataset's ``uuid``. A turn is a driver utterance followed by the assistant's reply (a reply
without a driver utterance since the previous reply is dropped, as is a trailing driver
utterance); consecutive driver utterances keep the last one as the turn's user text.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from todeval.scoring.incar._delex import clean_constraints, delexicalize_response
from todeval.scoring.incar._ontology import INTENTS, Intent, Lexicon, load_lexicon
from todeval.scoring.incar._text import normalize

Split = Literal["test", "dev"]
SPLITS: tuple[Split, ...] = ("test", "dev")


class GoldTurn(BaseModel):
    """One system turn of the gold."""

    model_config = ConfigDict(extra="forbid")

    user: str = Field(description="normalized driver utterance")
    response: str = Field(description="normalized, delexicalized assistant reply")
    state: dict[str, str] = Field(description="gold constraints after this turn: slot → value")


class GoldDialogue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dialogue_id: str = Field(description="0-based index in the split file, as a string")
    uuid: str
    intent: Intent
    turns: list[GoldTurn]


class GoldSplit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: Split
    dialogues: list[GoldDialogue]

    def by_id(self) -> dict[str, GoldDialogue]:
        return {d.dialogue_id: d for d in self.dialogues}


def _raw_split(split: Split) -> list[dict[str, Any]]:
    node = resources.files("todeval") / "data" / "incar" / f"kvret_{split}_public.json.gz"
    raw = json.loads(gzip.decompress(node.read_bytes()).decode("utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"kvret_{split}_public.json is not a list of dialogues")
    return raw


def build_dialogue(index: int, raw: dict[str, Any], lexicon: Lexicon) -> GoldDialogue:
    """Preprocess one raw KVRET dialogue."""
    intent = raw["scenario"]["task"]["intent"]
    if intent not in INTENTS:
        raise ValueError(f"dialogue {index}: unknown intent {intent!r}")
    turns: list[GoldTurn] = []
    history = ""
    pending_user: str | None = None
    constraints: dict[str, str] = {}
    for entry in raw["dialogue"]:
        data = entry["data"]
        if entry["turn"] == "driver":
            pending_user = normalize(data["utterance"])
            history += pending_user
            continue
        response = delexicalize_response(data["utterance"], history, intent, lexicon)
        constraints = clean_constraints({**constraints, **data.get("slots", {})}, intent, lexicon)
        if pending_user is not None:
            turns.append(GoldTurn(user=pending_user, response=response, state=dict(constraints)))
        pending_user = None
    return GoldDialogue(
        dialogue_id=str(index), uuid=raw["scenario"]["uuid"], intent=intent, turns=turns
    )


def load_gold(split: Split = "test", lexicon: Lexicon | None = None) -> GoldSplit:
    """Preprocess the shipped KVRET split (a fraction of a second; not cached)."""
    lexicon = lexicon or load_lexicon()
    dialogues = [build_dialogue(i, d, lexicon) for i, d in enumerate(_raw_split(split))]
    return GoldSplit(split=split, dialogues=dialogues)
