"""In-Car evaluation end to end: gold as predictions, partial files, CIs, Summary output."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from todeval.core.records import Summary
from todeval.errors import BadInputError
from todeval.scoring.incar import (
    METRICS,
    IncarPredictions,
    IncarResult,
    Split,
    evaluate,
    gold_as_predictions,
    gold_document,
    load_gold,
    parse_predictions,
    score_predictions,
)
from todeval.scoring.incar._metrics import combined

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "incar"
RESAMPLES = 200


def _gold_predictions(split: Split = "test") -> dict[str, list[dict[str, Any]]]:
    return gold_as_predictions(load_gold(split))


@pytest.mark.parametrize("split", ["test", "dev"])
def test_gold_as_predictions_scores_full_marks(split: Split) -> None:
    result = evaluate(_gold_predictions(split), split=split, resamples=RESAMPLES)
    assert result.match is not None and result.match >= 95.0
    assert result.succ_f1 >= 95.0
    # our normalization is idempotent, so the gold reproduces itself exactly
    assert result.match == pytest.approx(100.0)
    assert result.succ_f1 == pytest.approx(100.0, abs=1e-4)
    assert result.bleu == pytest.approx(100.0)
    assert result.bleu_lineage == pytest.approx(100.0, abs=1e-4)
    assert not result.gold_states


def test_split_sizes_and_intents() -> None:
    test, dev = load_gold("test"), load_gold("dev")
    assert len(test.dialogues) == 304 and len(dev.dialogues) == 302
    counts = {
        i: sum(d.intent == i for d in test.dialogues) for i in ("schedule", "navigate", "weather")
    }
    assert counts == {"schedule": 104, "navigate": 100, "weather": 100}
    assert [d.dialogue_id for d in test.dialogues[:3]] == ["0", "1", "2"]
    assert len({d.uuid for d in test.dialogues}) == 304


def test_gold_document_lists_every_dialogue() -> None:
    document = gold_document(load_gold("test"))
    assert document["split"] == "test"
    assert len(document["dialogues"]) == 304
    first = document["dialogues"]["0"]
    assert set(first) == {"uuid", "intent", "turns"}
    assert set(first["turns"][0]) == {"user", "response", "state"}


def test_summary_has_namespaced_metrics_with_cis_and_intent_groups() -> None:
    result = _partially_wrong()
    summary = Summary.model_validate(result.summary.model_dump(mode="json"))
    assert summary.benchmark == "incar"
    assert list(summary.metrics) == list(METRICS)
    assert summary.n_episodes == 304
    for name, metric in summary.metrics.items():
        assert set(metric.by_group) == {"schedule", "navigate", "weather"}, name
        micro = metric.micro
        assert micro.value is not None and micro.ci_low is not None and micro.ci_high is not None
        assert micro.ci_low <= micro.value + 1e-9 and micro.value <= micro.ci_high + 1e-9, name
        assert metric.macro is not None
    for name in ("incar.match", "incar.succ_f1", "incar.bleu", "incar.combined_lineage"):
        micro = summary.metrics[name].micro
        assert micro.ci_low is not None and micro.ci_high is not None
        assert micro.ci_low < micro.ci_high, name


def test_combined_is_half_match_plus_succ_f1_plus_bleu() -> None:
    result = _partially_wrong()
    assert result.match is not None and result.combined is not None
    assert result.combined == pytest.approx((result.match + result.succ_f1) * 0.5 + result.bleu)
    assert result.combined_lineage == pytest.approx(
        (result.match + result.succ_f1) * 0.5 + result.bleu_lineage
    )


def test_published_combined_follows_the_formula() -> None:
    with (FIXTURES / "published.csv").open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    assert {r["model"] for r in rows} == {"GALAXY", "SPACE-3"}
    for row in rows:
        value = combined(
            np.array(float(row["match"])),
            np.array(float(row["succf1"])),
            np.array(float(row["bleu"])),
        )
        assert float(value) == pytest.approx(float(row["combined"]), abs=0.011)


def _partially_wrong() -> IncarResult:
    predictions = _gold_predictions()
    for i, turns in enumerate(predictions.values()):
        if i % 3 == 0:
            turns[-1]["response"] = "sure , [value_poi] it is ."
            turns[-1]["state"] = {"event": "dinner"}
    return evaluate(predictions, resamples=RESAMPLES)


def test_wrong_predictions_lower_scores() -> None:
    result = _partially_wrong()
    assert result.match is not None and result.match < 100.0
    assert result.succ_f1 < 100.0 and result.succ_precision < 100.0
    assert result.bleu < 100.0


def test_dialogue_without_gold_value_turn_is_left_out_of_match() -> None:
    gold = load_gold("test")
    skipped = next(d for d in gold.dialogues if not any("[value" in t.response for t in d.turns))
    counted = next(d for d in gold.dialogues if any("[value" in t.response for t in d.turns))
    predictions = {
        d.dialogue_id: [{"response": t.response, "state": {}} for t in d.turns]
        for d in (skipped, counted)
    }
    result = evaluate(predictions, resamples=RESAMPLES)
    scores = {s.dialogue_id: s for s in result.dialogues}
    assert scores[skipped.dialogue_id].match is None
    assert scores[counted.dialogue_id].match is False
    assert result.match_evaluated == 1
    assert result.match == pytest.approx(0.0)


def test_partial_predictions_score_only_given_dialogues_and_turns() -> None:
    full = _gold_predictions()
    predictions = {k: v[:1] for k, v in list(full.items())[:10]}
    result = evaluate(predictions, resamples=RESAMPLES)
    assert result.n_scored == 10 and result.n_turns == 10
    assert result.summary.excluded == {"missing": 294}
    assert result.bleu == pytest.approx(100.0)


def test_missing_states_fall_back_to_gold_states() -> None:
    predictions = _gold_predictions()
    for turns in predictions.values():
        for turn in turns:
            del turn["state"]
    result = evaluate(predictions, resamples=RESAMPLES)
    assert result.gold_states
    assert result.summary.outcomes == {"gold_states": 304}
    assert result.match == pytest.approx(100.0)


def test_predicted_states_are_normalized_like_gold() -> None:
    gold = load_gold("test")
    dialogue = next(
        d
        for d in gold.dialogues
        if d.intent == "schedule"
        and any("[value" in t.response for t in d.turns)
        and d.turns[-1].state.get("event")
    )
    turns = [{"response": t.response, "state": dict(t.state)} for t in dialogue.turns]
    for turn in turns:  # raw-looking values with an intent prefix
        state = turn["state"]
        assert isinstance(state, dict)
        turn["state"] = {f"schedule-{k}": v.upper() for k, v in state.items()}
    result = evaluate({dialogue.dialogue_id: turns}, resamples=RESAMPLES)
    assert result.dialogues[0].match is True


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    predictions = _gold_predictions()
    for i, turns in enumerate(predictions.values()):
        if i % 2:
            turns[0]["response"] = "hello ."
    a = evaluate(predictions, seed=3, resamples=RESAMPLES)
    b = evaluate(predictions, seed=3, resamples=RESAMPLES)
    assert a.summary == b.summary


def test_validated_predictions_are_accepted_and_empty_ones_refused() -> None:
    gold = load_gold("test")
    parsed = parse_predictions({"0": [{"response": gold.dialogues[0].turns[0].response}]}, gold)
    result = evaluate(parsed, resamples=RESAMPLES)
    assert result.n_scored == 1 and result.gold_states
    with pytest.raises(BadInputError):
        score_predictions(IncarPredictions(dialogues={}), gold)
    with pytest.raises(BadInputError):
        evaluate({"0": []})
