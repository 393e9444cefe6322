"""MultiWOZ scorer controls for ``todeval validate multiwoz``: prediction files with no skill,
and the references themselves.

* ``empty`` -- every response empty;
* ``copy-user`` -- every response is the user's utterance of that turn;
* ``dump`` -- every response names every placeholder a venue can have ("[name] [phone]
  [address] [postcode] [reference] ..."): the cheapest way to fish for Inform and Success;
* ``constant`` -- every response the most frequent reference response of the test set (the
  strongest single sentence: it is chosen with the answers in hand);
* ``gold`` -- the MultiWOZ 2.2 references (the ceiling).

States are left out, so every file is scored with the gold states, as a response-only system.
The headline of ``empty`` and ``copy-user`` is Combined = (Inform + Success) / 2 + BLEU (the
standard evaluator's scheme). ``dump`` is judged on BLEU: on Combined it *passes the ceiling*
(Inform 96.1, Success 95.9, Combined 96.0, where the delexicalised references are not shipped to
compare with; published systems reach about 100-110): a property of the published metric,
which credits a placeholder whether or not the turn called for it -- read Inform and Success
beside BLEU and the richness figures. ``gold`` is judged on BLEU too: the shipped references are
normalised (``COUNT``, ``TIME``), not delexicalised, so their Inform and Success mean nothing.
"""

from __future__ import annotations

from typing import Any, Literal

from todeval.core.records import Summary
from todeval.validation import Control, ControlJob, ControlSuite

_DUMP = (
    "[name] [phone] [address] [postcode] [reference] [area] [pricerange] [food] [type] [stars] "
    "[trainid] [price] [leaveat] [arriveby] [duration] [departure] [destination] [choice]"
)


def _predictions(kind: str, limit: int | None) -> dict[str, list[dict[str, Any]]]:
    from todeval.benchmarks.multiwoz_turns.corpus import load_user_turns
    from todeval.scoring.multiwoz import CorpusData

    references = CorpusData().references
    users = load_user_turns()
    ids = list(references)[:limit] if limit else list(references)
    out: dict[str, list[dict[str, Any]]] = {}
    for dialogue in ids:
        refs = references[dialogue]
        said = users.get(dialogue, [])
        if kind == "empty":
            responses = ["" for _ in refs]
        elif kind == "copy-user":
            responses = [said[i] if i < len(said) else "" for i in range(len(refs))]
        elif kind == "dump":
            responses = [_DUMP for _ in refs]
        elif kind == "constant":
            responses = [_most_frequent(references) for _ in refs]
        else:
            responses = list(refs)
        out[dialogue] = [{"response": r} for r in responses]
    return out


def _most_frequent(references: dict[str, list[str]]) -> str:
    from collections import Counter

    counts = Counter(r for refs in references.values() for r in refs)
    return min(counts, key=lambda r: (-counts[r], r))


def score(job: ControlJob) -> Summary:
    """Build the control's prediction file in its directory and score it."""
    import json

    from todeval.scoring.multiwoz import evaluate, to_summary

    kind = job.control.name
    predictions = _predictions(kind, job.limit)
    (job.workdir / "predictions.json").write_text(json.dumps(predictions), encoding="utf-8")
    result = evaluate(predictions, metrics=["inform", "success", "bleu"])
    summary: Summary = to_summary(result, seed=job.seed, resamples=1000)
    return summary


_CONTROLS: dict[str, tuple[Literal["floor", "ceiling"], float, float, str]] = {
    "empty": ("floor", 0.0, 20.0, "every response empty"),
    "copy-user": ("floor", 0.0, 30.0, "the user's utterance said back"),
    "dump": ("floor", 0.0, 5.0, "every venue placeholder in every response (BLEU)"),
    "constant": ("floor", 0.0, 30.0, "the most frequent reference response, every turn"),
    "gold": ("ceiling", 70.0, 100.0, "the references themselves (BLEU)"),
}
_METRIC = {"dump": "multiwoz.bleu", "gold": "multiwoz.bleu"}

SUITE = ControlSuite(
    name="multiwoz",
    controls=tuple(
        Control(
            name=name,
            kind=kind,
            description=what,
            metric=_METRIC.get(name, "multiwoz.combined"),
            low=low,
            high=high,
            score=f"{__name__}:score",
        )
        for name, (kind, low, high, what) in _CONTROLS.items()
    ),
    notes=(
        "Over the 1,000 MultiWOZ 2.1 test dialogues, responses only (gold states).",
        "Known weakness of the published metric: the placeholder dump reaches Inform 96.1, "
        "Success 95.9, Combined 96.0 (judged here on BLEU); see docs/scoring-multiwoz.md.",
    ),
)
