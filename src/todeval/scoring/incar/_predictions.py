"""The In-Car prediction format and its validation.

A prediction file is a JSON object mapping dialogue ids (the 0-based index of the dialogue in
the split file, as a string: ``"0"`` … ``"303"`` for test) to a list with one object per
system turn, in order::

    {"0": [{"response": "[value_time] is fine .", "state": {"event": "meeting"}}, ...], ...}

``response`` is the delexicalized reply (placeholders ``[value_<slot>]``); ``state`` (optional)
maps informable slots to values. Dialogues may be missing (they are not scored) and a dialogue
may stop early (only its given turns are compared); more turns than the gold has is an error.
If any turn lacks ``state``, gold states are used for every turn (the policy setting).
Anything else malformed raises :class:`~todeval.errors.BadInputError` with a one-line message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from todeval.core import safejson
from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError
from todeval.scoring.incar._gold import GoldSplit

_TURN_KEYS = frozenset({"response", "state"})

MAX_RESPONSE_CHARS = 10_000
"""Longest response accepted (the longest gold response has 300 characters). Scoring time
grows faster than linearly with a response's length (a 1 MB response took 47 s), so a longer
one is refused with one line instead of being scored for minutes."""
MAX_STATE_SLOTS = 32
MAX_STATE_CHARS = 200
"""Most slots in one turn's state, and longest slot name or value (lexicon entries are short)."""


class PredictedTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    response: str = Field(description="delexicalized system reply")
    state: dict[str, str] | None = Field(None, description="predicted constraints: slot → value")


class IncarPredictions(BaseModel):
    """Validated predictions: dialogue id → turns."""

    model_config = ConfigDict(extra="forbid")

    dialogues: dict[str, list[PredictedTurn]]

    @property
    def has_states(self) -> bool:
        """True when every turn carries a state (else gold states are used)."""
        return all(t.state is not None for turns in self.dialogues.values() for t in turns)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _turn(where: str, raw: Any) -> PredictedTurn:
    if not isinstance(raw, dict):
        raise BadInputError(f"{where}: expected an object, got {_kind(raw)}")
    unknown = sorted(set(raw) - _TURN_KEYS)
    if unknown:
        raise BadInputError(f"{where}: unknown key {unknown[0]!r} (allowed: response, state)")
    if "response" not in raw:
        raise BadInputError(f"{where}: missing 'response'")
    if not isinstance(raw["response"], str):
        raise BadInputError(f"{where}: 'response' must be a string, got {_kind(raw['response'])}")
    if len(raw["response"]) > MAX_RESPONSE_CHARS:
        raise BadInputError(
            f"{where}: 'response' has {len(raw['response']):,} characters; "
            f"at most {MAX_RESPONSE_CHARS:,} are accepted"
        )
    state = raw.get("state")
    if "state" in raw:
        if not isinstance(state, dict):
            raise BadInputError(f"{where}: 'state' must be an object, got {_kind(state)}")
        if len(state) > MAX_STATE_SLOTS:
            raise BadInputError(
                f"{where}: 'state' has {len(state):,} slots; at most {MAX_STATE_SLOTS} are accepted"
            )
        for slot, value in state.items():
            if not isinstance(value, str):
                raise BadInputError(
                    f"{where}: state value of {slot!r} must be a string, got {_kind(value)}"
                )
            if len(slot) > MAX_STATE_CHARS or len(value) > MAX_STATE_CHARS:
                raise BadInputError(
                    f"{where}: state slot {slot[:40]!r}: slot names and values have at most "
                    f"{MAX_STATE_CHARS} characters"
                )
    return PredictedTurn(response=raw["response"], state=state)


def parse_predictions(raw: Any, gold: GoldSplit, source: str = "predictions") -> IncarPredictions:
    """Validate parsed JSON against the gold split; raise BadInputError on the first problem."""
    if isinstance(raw, IncarPredictions):
        raw = raw.model_dump(exclude_none=True)["dialogues"]
    if not isinstance(raw, Mapping):
        raise BadInputError(
            f"{source}: expected a JSON object mapping dialogue ids to turn lists, got {_kind(raw)}"
        )
    if not raw:
        raise BadInputError(f"{source}: no dialogues")
    by_id = gold.by_id()
    last = len(gold.dialogues) - 1
    dialogues: dict[str, list[PredictedTurn]] = {}
    for dialogue_id, turns in raw.items():
        if dialogue_id not in by_id:
            raise BadInputError(
                f"{source}: unknown dialogue id {dialogue_id!r} "
                f"({gold.split} ids are '0' to '{last}', the index in the split file)"
            )
        where = f"{source}: dialogue {dialogue_id!r}"
        if not isinstance(turns, list):
            raise BadInputError(f"{where}: expected a list of turns, got {_kind(turns)}")
        if not turns:
            raise BadInputError(f"{where}: no turns")
        n_gold = len(by_id[dialogue_id].turns)
        if len(turns) > n_gold:
            raise BadInputError(f"{where}: {len(turns)} turns given, the gold has {n_gold}")
        dialogues[dialogue_id] = [_turn(f"{where} turn {i}", t) for i, t in enumerate(turns)]
    return IncarPredictions(dialogues=dialogues)


def read_predictions(path: Path, gold: GoldSplit) -> IncarPredictions:
    """Read and validate a prediction file."""
    try:
        text = read_user_text(path, what="prediction file")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read: {exc}") from None
    if not text.strip():
        raise BadInputError(f"{path}: empty file")
    try:
        raw = safejson.loads(text)
    except safejson.JsonDepthError as exc:
        raise BadInputError(f"{path}: not accepted: JSON {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadInputError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    return parse_predictions(raw, gold, source=str(path))
