"""Measure the slot tracker on the corpus user turns of the test and dev booking tasks.

What is counted (per user turn, micro-averaged over all turns of a task set):

* **Gold**: every ``(domain, slot, value)`` of the turn's ``Restaurant-Inform``,
  ``Hotel-Inform`` and ``Train-Inform`` dialogue acts, except slot ``none``. Slot names are
  mapped to the tracker's: ``bookday``->``day``, ``bookpeople``->``people``,
  ``booktime``->``time``, ``bookstay``->``stay`` (others unchanged: ``area``, ``pricerange``,
  ``food``, ``name``, ``type``, ``stars``, ``internet``, ``parking``, ``departure``,
  ``destination``, ``leaveat``, ``arriveby``, ``day``).
* **Predicted**: the triples the tracker reads from that turn (not the accumulated state).
  The tracker reads the dialogue in order: it sees every earlier user turn and, for each system
  turn, what that turn asks for (:meth:`SlotTracker.observe_system`); it never sees the acts.
* **Values** on both sides go through :func:`canonical_value`: lower case; ``guest house`` ->
  ``guesthouse``; ``free`` -> ``yes``; any ``dontcare`` spelling -> ``dontcare``; times ->
  ``HH:MM`` (``9:15`` -> ``09:15``, ``1300hrs`` -> ``13:00``, ``after 19:45`` -> ``19:45``);
  venue names -> the DB name when the annotated string is a known short form or a close
  misspelling of exactly one DB name (``gonville`` -> ``gonville hotel``); foods through the
  vocabulary's aliases (``asian`` -> ``asian oriental``).

A triple counts as correct when it appears on both sides exactly.
"""

from __future__ import annotations

from pydantic import BaseModel

from todeval.benchmarks.booking.systems.text import normalise_text, normalise_time
from todeval.benchmarks.booking.systems.tracker import SlotTracker
from todeval.benchmarks.booking.systems.vocab import Vocabulary, vocabulary
from todeval.benchmarks.booking.tasks import BookingTask, load_tasks, normalise_value

ACT_SLOT_MAP = {"bookday": "day", "bookpeople": "people", "booktime": "time",
                "bookstay": "stay", "leaveat": "leaveat", "arriveby": "arriveby",
                "price range": "pricerange", "pricerange": "pricerange"}  # fmt: skip
_DOMAINS = {"Restaurant": "restaurant", "Hotel": "hotel", "Train": "train"}
_DONTCARE = {"dontcare", "dont care", "don't care", "do n't care", "any", "none"}

Triple = tuple[str, str, str]


class SlotScores(BaseModel):
    """Micro precision/recall/F1 over (domain, slot, value) triples."""

    task_set: str
    turns: int
    gold: int
    predicted: int
    correct: int

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _name(domain: str, value: str, vocab: Vocabulary) -> str:
    from rapidfuzz import fuzz

    names = vocab.names.get(domain, ())
    norm = normalise_text(value)
    if value in names:
        return value
    owners = {p.value for p in vocab.by_text.get(norm, ()) if p.kind == f"name:{domain}"}
    if len(owners) == 1:
        return next(iter(owners))
    scored = sorted(((fuzz.ratio(norm, normalise_text(n)), n) for n in names), reverse=True)
    if scored and scored[0][0] >= 88 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return scored[0][1]
    return value


def canonical_value(domain: str, slot: str, value: str, vocab: Vocabulary) -> str:
    """One spelling per value (see the module docstring)."""
    text = value.strip().lower()
    if text in _DONTCARE:
        return "dontcare"
    text = normalise_value(slot, text)
    if slot in ("time", "leaveat", "arriveby") and not vocab.times_free_form:
        return normalise_time(text) or text
    if slot == "name":
        return _name(domain, text, vocab)
    if slot == "food":
        foods = {p.value for p in vocab.by_text.get(normalise_text(text), ()) if p.kind == "food"}
        return next(iter(foods)) if len(foods) == 1 else text
    if slot in ("departure", "destination"):
        st = {p.value for p in vocab.by_text.get(normalise_text(text), ()) if p.kind == "station"}
        return next(iter(st)) if len(st) == 1 else text
    return text


def gold_triples(dialog_act: dict[str, list[list[str]]], vocab: Vocabulary) -> set[Triple]:
    """The counted triples of one annotated user turn."""
    out: set[Triple] = set()
    for act, pairs in dialog_act.items():
        dom_name, _, kind = act.partition("-")
        domain = _DOMAINS.get(dom_name)
        if domain is None or kind != "Inform":
            continue
        for pair in pairs:
            if len(pair) != 2:
                continue
            slot, value = pair[0].strip().lower(), pair[1]
            if slot in ("none", ""):
                continue
            slot = ACT_SLOT_MAP.get(slot, slot)
            out.add((domain, slot, canonical_value(domain, slot, value, vocab)))
    return out


class TurnError(BaseModel):
    task_id: str
    text: str
    missed: list[Triple]
    extra: list[Triple]


def evaluate_tasks(tasks: list[BookingTask], task_set: str) -> tuple[SlotScores, list[TurnError]]:
    """Run the tracker over every corpus dialogue; return the scores and the wrong turns."""
    vocab = vocabulary(task_set)
    turns = gold_n = pred_n = correct = 0
    errors: list[TurnError] = []
    for task in tasks:
        tracker = SlotTracker(task_set, vocab)
        for turn in task.corpus_turns:
            if turn.speaker == "system":
                tracker.observe_system(turn.text)
                continue
            parsed = tracker.update(turn.text)
            pred = {(d, s, canonical_value(d, s, v, vocab)) for d, s, v in parsed.triples()}
            gold = gold_triples(turn.dialog_act, vocab)
            turns += 1
            gold_n += len(gold)
            pred_n += len(pred)
            correct += len(gold & pred)
            if gold != pred:
                errors.append(
                    TurnError(
                        task_id=task.task_id,
                        text=turn.text,
                        missed=sorted(gold - pred),
                        extra=sorted(pred - gold),
                    )
                )
    scores = SlotScores(task_set=task_set, turns=turns, gold=gold_n, predicted=pred_n,
                        correct=correct)  # fmt: skip
    return scores, errors


def evaluate_tracker(task_set: str) -> SlotScores:
    """Slot P/R/F1 of the tracker on one task set's corpus user turns (test or dev)."""
    return evaluate_tasks(load_tasks(task_set), task_set)[0]
