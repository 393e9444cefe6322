"""The MultiWOZ test dialogues as a generation run sees them.

* User turns: the package's ``multiwoz/corpus/user_turns_test.json.gz`` (MultiWOZ 2.1 text, one
  user utterance before each system turn; 1000 dialogues, 7372 turns, official test order).
* Gold system turns of the history: the scorer's MultiWOZ 2.2 BLEU references, whose canonical
  classes (``NAME``, ``PHONE``, ...) are written back as bracketed placeholders
  (``[value_name]``, ``[value_phone]``, ...) -- the same vocabulary the model must use, and one
  the scorer maps back to the same classes.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from importlib import resources

from todeval.scoring.multiwoz import CorpusData

# Canonical class of the references -> the placeholder the model reads and writes. Every name
# maps back to its class under the scorer's placeholder table (tested).
PLACEHOLDERS: dict[str, str] = {
    "NAME": "value_name",
    "ADDRESS": "value_address",
    "PHONE": "value_phone",
    "POST": "value_postcode",
    "REFERENCE": "value_reference",
    "TRAINID": "value_id",
    "TIME": "value_time",
    "DAY": "value_day",
    "PLACE": "value_place",
    "PRICE": "value_price",
    "COUNT": "value_count",
    "AREA": "value_area",
    "FOOD": "value_food",
    "TYPE": "value_type",
}
# A class word is upper case; lower-case letters may follow it (``COUNTtar``, ``TIMEpm``: the
# references keep what followed a placeholder), other capitals may not.
_CLASS_RE = re.compile(
    r"(?<![A-Za-z])(" + "|".join(sorted(PLACEHOLDERS, key=len, reverse=True)) + r")(?![A-Z])"
)

N_TEST_DIALOGUES = 1000
N_TEST_TURNS = 7372


def render_reference(reference: str) -> str:
    """A normalised reference with its canonical classes as bracketed placeholders."""
    return _CLASS_RE.sub(lambda m: f"[{PLACEHOLDERS[m.group(1)]}]", reference)


def load_user_turns() -> dict[str, list[str]]:
    """Dialogue id -> user utterances, in the official test order."""
    node = resources.files("todeval") / "data" / "multiwoz" / "corpus" / "user_turns_test.json.gz"
    data: dict[str, list[str]] = json.loads(gzip.decompress(node.read_bytes()).decode("utf-8"))
    return data


@dataclass(frozen=True)
class MultiwozDialogue:
    """One test dialogue: user turns and the gold delexicalised system turns."""

    dialogue_id: str
    users: tuple[str, ...]
    systems: tuple[str, ...]
    group: str = ""

    @property
    def n_turns(self) -> int:
        return len(self.users)


def canonical_id(dialogue_id: str) -> str:
    """``SNG0073.json`` / ``SNG0073`` -> ``sng0073`` (the scorer's form)."""
    return dialogue_id.strip().lower().removesuffix(".json")


def load_dialogues(corpus: CorpusData | None = None) -> list[MultiwozDialogue]:
    """The 1000 test dialogues in the official order, grouped by their goal's domains."""
    corpus = corpus if corpus is not None else CorpusData()
    references = corpus.references
    goals = corpus.goals
    dialogues = []
    for dialogue_id, users in load_user_turns().items():
        systems = references[dialogue_id]
        if len(systems) != len(users):
            raise ValueError(
                f"{dialogue_id}: {len(users)} user turns but {len(systems)} reference turns"
            )
        dialogues.append(
            MultiwozDialogue(
                dialogue_id=dialogue_id,
                users=tuple(users),
                systems=tuple(render_reference(r) for r in systems),
                group="+".join(sorted(goals.get(dialogue_id, {}))),
            )
        )
    return dialogues
