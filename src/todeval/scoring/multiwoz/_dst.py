"""Dialogue state tracking against the MultiWOZ 2.2 gold states.

Per turn, both states are flattened to ``(domain, slot) -> value``. A slot value is correct
when the rounded partial ratio of predicted and gold value exceeds 95. Joint accuracy: the turn
has exactly the gold slots, all correct. Slot precision/recall/F1 pool true positives, false
positives (predicted slot absent from gold or wrong) and false negatives (gold slot missing or
wrong) over all turns.

Deviation from the standard evaluator: the ``book`` prefix of slot names is dropped on both
sides (the gold states say ``bookday``/``bookpeople``, predictions say ``day``/``people``), so
booking slots can match at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from todeval.scoring.multiwoz._fuzzy import fuzzy_match
from todeval.scoring.multiwoz._normalize import State

DST_RATIO = 95


@dataclass(frozen=True)
class TurnDst:
    joint: bool
    tp: int
    fp: int
    fn: int


def _flatten(state: Mapping[str, Mapping[str, str]]) -> dict[tuple[str, str], str]:
    flat: dict[tuple[str, str], str] = {}
    for domain, slots in state.items():
        for slot, value in slots.items():
            name = slot[4:] if slot.startswith("book") else slot
            flat[(domain, name)] = value
    return flat


class DstScorer:
    """Compares predicted with gold states; memoises value comparisons."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], bool] = {}

    def _same(self, predicted: str, gold: str) -> bool:
        key = (predicted, gold)
        same = self._memo.get(key)
        if same is None:
            same = fuzzy_match(predicted, gold, DST_RATIO + 1)
            self._memo[key] = same
        return same

    def turn(self, predicted: State, gold: State) -> TurnDst:
        hyp, ref = _flatten(predicted), _flatten(gold)
        tp = sum(1 for k, v in hyp.items() if k in ref and self._same(v, ref[k]))
        fp = len(hyp) - tp
        fn = len(ref) - tp
        joint = hyp.keys() == ref.keys() and tp == len(ref)
        return TurnDst(joint=joint, tp=tp, fp=fp, fn=fn)
