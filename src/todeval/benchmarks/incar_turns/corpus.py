"""The In-Car Assistant (KVRET) dialogues as a generation run sees them.

Turns follow the scorer's gold (:func:`todeval.scoring.incar.load_gold`): a turn is one or more
driver utterances followed by the assistant's reply; a trailing driver utterance has no reply
and is not a turn. The history shows the driver's utterances as in the dataset and the
assistant's turns as the scorer's delexicalized gold (lower-cased, tokenized, ``[value_<slot>]``
placeholders). Each dialogue also carries its intent and its knowledge base.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from todeval.scoring.incar import GoldSplit, Split


@dataclass(frozen=True)
class IncarTurn:
    users: tuple[str, ...]  # the driver's utterances since the previous reply (usually one)
    response: str  # the gold delexicalized reply


@dataclass(frozen=True)
class IncarDialogue:
    dialogue_id: str
    intent: str
    kb_title: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]
    turns: tuple[IncarTurn, ...]

    @property
    def n_turns(self) -> int:
        return len(self.turns)


def load_raw(split: Split) -> list[dict[str, Any]]:
    """The shipped KVRET split as in the dataset."""
    node = resources.files("todeval") / "data" / "incar" / f"kvret_{split}_public.json.gz"
    raw: list[dict[str, Any]] = json.loads(gzip.decompress(node.read_bytes()).decode("utf-8"))
    return raw


def _user_groups(raw: dict[str, Any]) -> list[tuple[str, ...]]:
    """Per assistant reply that follows a driver utterance, the driver utterances before it."""
    groups: list[tuple[str, ...]] = []
    pending: list[str] = []
    for entry in raw["dialogue"]:
        text = str(entry["data"]["utterance"]).strip()
        if entry["turn"] == "driver":
            pending.append(text)
        elif pending:
            groups.append(tuple(pending))
            pending = []
    return groups


def _rows(kb: dict[str, Any]) -> tuple[dict[str, str], ...]:
    items = kb.get("items") or []
    return tuple({str(k): str(v) for k, v in item.items()} for item in items)


def load_dialogues(split: Split, gold: GoldSplit) -> list[IncarDialogue]:
    """The split's dialogues in file order (ids ``"0"``, ``"1"``, ...)."""
    raw = load_raw(split)
    dialogues = []
    for gold_dialogue in gold.dialogues:
        source = raw[int(gold_dialogue.dialogue_id)]
        users = _user_groups(source)
        if len(users) != len(gold_dialogue.turns):
            raise ValueError(
                f"incar {split} dialogue {gold_dialogue.dialogue_id}: {len(users)} replies "
                f"after driver turns but {len(gold_dialogue.turns)} gold turns"
            )
        kb = source["scenario"]["kb"]
        dialogues.append(
            IncarDialogue(
                dialogue_id=gold_dialogue.dialogue_id,
                intent=gold_dialogue.intent,
                kb_title=str(kb.get("kb_title") or ""),
                columns=tuple(str(c) for c in kb.get("column_names") or ()),
                rows=_rows(kb),
                turns=tuple(
                    IncarTurn(users=u, response=t.response)
                    for u, t in zip(users, gold_dialogue.turns, strict=True)
                ),
            )
        )
    return dialogues
