"""In-Car (KVRET) scorer controls for ``todeval validate incar``.

* ``empty`` -- every response empty, no state;
* ``copy-user`` -- every response is the driver's utterance of that turn, no state;
* ``dump`` -- every response names every placeholder the lineage knows, no state;
* ``constant`` -- every response the most frequent gold response of the test set (chosen with
  the answers in hand), no state;
* ``gold`` -- the gold itself (responses and states): 100 on every metric.

The floors are judged on BLEU and the gold on Combined = (Match + SuccF1) / 2 + BLEU (GALAXY's
scheme). Measured properties of the published metric, kept as they are (the scorer is exact to
GALAXY's): a file without states is matched with the gold states (Match 97.89 for all three
floors), and SuccF1 credits placeholders whatever the turn: the driver's own utterance said back
scores SuccF1 67.64 (Combined 87.01), the placeholder dump 37.77 (Combined 71.67).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from todeval.core.records import Summary
from todeval.validation import Control, ControlJob, ControlSuite

_DUMP = (
    "[value_poi] [value_address] [value_distance] [value_poi_type] [value_traffic_info] "
    "[value_event] [value_date] [value_time] [value_party] [value_room] [value_agenda] "
    "[value_location] [value_weather_attribute] [value_temperature] [value_weekly_time]"
)


def _predictions(kind: str, limit: int | None) -> dict[str, list[dict[str, Any]]]:
    from todeval.scoring.incar import gold_as_predictions, load_gold

    gold = load_gold("test")
    if kind == "gold":
        out = gold_as_predictions(gold)
    else:
        out = {}
        for d in gold.dialogues:
            if kind == "empty":
                out[d.dialogue_id] = [{"response": ""} for _ in d.turns]
            elif kind == "copy-user":
                out[d.dialogue_id] = [{"response": t.user} for t in d.turns]
            elif kind == "constant":
                out[d.dialogue_id] = [{"response": _most_frequent(gold)} for _ in d.turns]
            else:
                out[d.dialogue_id] = [{"response": _DUMP} for _ in d.turns]
    if limit:
        out = dict(list(out.items())[:limit])
    return out


def _most_frequent(gold: Any) -> str:
    from collections import Counter

    counts = Counter(t.response for d in gold.dialogues for t in d.turns)
    return str(min(counts, key=lambda r: (-counts[r], r)))


def score(job: ControlJob) -> Summary:
    """Build the control's prediction file in its directory and score it."""
    from todeval.scoring.incar import evaluate

    predictions = _predictions(job.control.name, job.limit)
    (job.workdir / "predictions.json").write_text(json.dumps(predictions), encoding="utf-8")
    summary: Summary = evaluate(predictions, split="test").summary
    return summary


_CONTROLS: dict[str, tuple[Literal["floor", "ceiling"], float, float, str]] = {
    "empty": ("floor", 0.0, 10.0, "every response empty (BLEU)"),
    "copy-user": ("floor", 0.0, 10.0, "the driver's utterance said back (BLEU)"),
    "dump": ("floor", 0.0, 10.0, "every placeholder in every response (BLEU)"),
    "constant": ("floor", 0.0, 10.0, "the most frequent gold response, every turn (BLEU)"),
    "gold": ("ceiling", 199.0, 200.0, "the gold itself (Combined)"),
}

SUITE = ControlSuite(
    name="incar",
    controls=tuple(
        Control(
            name=name,
            kind=kind,
            description=what,
            metric="incar.combined" if kind == "ceiling" else "incar.bleu",
            low=low,
            high=high,
            score=f"{__name__}:score",
        )
        for name, (kind, low, high, what) in _CONTROLS.items()
    ),
    notes=(
        "Over the 304 In-Car test dialogues (808 turns).",
        "Known weaknesses of the published metric: without states Match is 97.89 (gold states); "
        "copy-user reaches SuccF1 67.64 (Combined 87.01), the dump 37.77 (Combined 71.67).",
    ),
)
