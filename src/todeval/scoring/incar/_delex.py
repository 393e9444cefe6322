"""Delexicalization of KVRET system turns and cleaning of gold constraints (LABES style).

Gold responses are built in three steps (``docs/scoring-incar.md`` has the details):

1. on the lower-cased raw text, regular expressions replace temperatures (``80f``, ``70-80f``),
   distances (``5 miles``) and street-address-like spans (a number and two words, as in
   ``593 arrowhead way``) by ``[value_temperature]``, ``[value_distance]`` and
   ``[value_address]``;
2. the text is tokenized and lemmatized (:func:`todeval.scoring.incar._text.normalize`);
3. every lexicon entity, longest first, whose slot is requestable for the dialogue's intent and
   which the user has not said earlier in the dialogue becomes ``[value_<slot>]``.

:func:`redelexicalize` is the lineage's evaluation-time clean-up: every lexicon entity, whatever
its slot or intent, that is still present as words becomes a placeholder. It is applied to both
generated and gold responses before SuccF1 and the lineage BLEU.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from todeval.scoring.incar._ontology import INFORMABLE, REQUESTABLE, Lexicon
from todeval.scoring.incar._text import join_am_pm, normalize

_TEMPERATURE = re.compile(r"\d+-?\d*fs?")
_DISTANCE = re.compile(r"\d+\s?miles?")
_ADDRESS = re.compile(r"\d+\s\w+\s\w*\.?")
_MILES = re.compile(r"(\d+)\s?(mile)s?")


def _squash(text: str) -> str:
    return text.replace(".", "").replace(" ", "").replace("'", "")


def replace_words(text: str, target: str, placeholder: str) -> str:
    """Replace ``target`` by ``placeholder`` where it starts a word, extending to the word's end.

    Occurrences are taken from the left; the first one that does not start a word stops the
    replacement (the lineage's rule, kept so that gold and scores stay comparable).
    """
    for _ in range(len(text) + 1):
        idx = text.find(target)
        if idx == -1 or (idx > 0 and text[idx - 1] != " "):
            break
        end = idx + len(target)
        while end < len(text) and (text[end].isalpha() or text[end].isdigit()):
            end += 1
        text = text[:idx] + placeholder + text[end:]
    return text


def delexicalize_response(utterance: str, user_history: str, intent: str, lexicon: Lexicon) -> str:
    """The gold (delexicalized, normalized) form of one system utterance.

    ``user_history`` is the concatenation of the normalized user utterances so far (the lineage
    joins them without a separator); entities found in it are left as words.
    """
    text = join_am_pm(utterance.lower())
    text = _TEMPERATURE.sub("[value_temperature]", text)
    text = _DISTANCE.sub("[value_distance]", text)
    text = _ADDRESS.sub("[value_address]", text)
    text = normalize(text)
    requestable = REQUESTABLE[intent]
    for value, slot in lexicon.by_length():
        if slot not in requestable:
            continue
        start = text.find(value)
        if start == -1:
            continue
        end = start + len(value)
        while end < len(text) and text[end] != " ":
            end += 1
        span = text[start:end]
        squashed = _squash(value)
        if squashed != _squash(span) or squashed in user_history or value in user_history:
            continue
        text = replace_words(text, span, f"[value_{slot}]")
    return text


def redelexicalize(text: str, lexicon: Lexicon) -> str:
    """Replace every lexicon entity still present as words (lexicon order, any slot)."""
    for value, slot in lexicon.entities.items():
        if value in text:
            text = replace_words(text, value, f"[value_{slot}]")
    return text


def clean_constraints(
    constraints: Mapping[str, str], intent: str, lexicon: Lexicon
) -> dict[str, str]:
    """Gold constraints: informable slots of the intent whose value is (or starts with) an entity.

    Values are normalized like text; a value that is not a lexicon entity but whose first word
    is one is shortened to that word (``doctor 's appointment`` → ``doctor``); others are dropped.
    """
    informable = INFORMABLE[intent]
    cleaned: dict[str, str] = {}
    for slot, raw in constraints.items():
        if slot not in informable:
            continue
        value = _MILES.sub(r"\1 \2", normalize(raw)).strip()
        if value in lexicon.entities:
            cleaned[slot] = value
        elif value and value.split()[0] in lexicon.entities:
            cleaned[slot] = value.split()[0]
    return cleaned
