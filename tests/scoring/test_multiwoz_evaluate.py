"""``evaluate`` and ``to_summary``: states, partial files, DST, CIs, the background child."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from todeval.core.records import Summary
from todeval.errors import BadInputError, UsageError
from todeval.scoring.multiwoz import (
    SCHEME,
    CorpusData,
    MultiwozResult,
    VenueDatabase,
    evaluate,
    to_summary,
)
from todeval.scoring.multiwoz._background import BackgroundCall

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"


@pytest.fixture(scope="module")
def corpus() -> CorpusData:
    return CorpusData()


@pytest.fixture(scope="module")
def database() -> VenueDatabase:
    return VenueDatabase()


def _load(name: str, n: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))
    return dict(list(data.items())[:n]) if n else data


def _score(
    data: dict[str, Any], corpus: CorpusData, db: VenueDatabase, **kw: Any
) -> MultiwozResult:
    return evaluate(data, corpus=corpus, database=db, **kw)


def test_any_turn_without_state_means_gold_states_everywhere(
    corpus: CorpusData, database: VenueDatabase
) -> None:
    data = _load("augpt", 60)
    one_missing = json.loads(json.dumps(data))
    next(iter(one_missing.values()))[0].pop("state")
    none = json.loads(json.dumps(data))
    for turns in none.values():
        for turn in turns:
            turn.pop("state")
    a = _score(one_missing, corpus, database, metrics=["inform", "success"])
    b = _score(none, corpus, database, metrics=["inform", "success"])
    c = _score(data, corpus, database, metrics=["inform", "success"])
    assert a.options.gold_states and b.options.gold_states and not c.options.gold_states
    assert any("gold MultiWOZ 2.2 states" in w for w in a.warnings)
    assert [d.inform for d in a.dialogues] == [d.inform for d in b.dialogues]


def test_missing_dialogues_and_turns_score_what_is_given(
    corpus: CorpusData, database: VenueDatabase
) -> None:
    data = _load("augpt", 30)
    first = next(iter(data))
    data[first] = data[first][:2]
    result = _score(data, corpus, database, metrics=["bleu", "inform", "success"])
    assert result.n_dialogues == 30
    assert result.dialogues[0].turns == 2
    assert result.n_turns == sum(len(t) for t in data.values())


def test_empty_turn_list_counts_as_a_dialogue(corpus: CorpusData, database: VenueDatabase) -> None:
    result = _score({"sng0073": []}, corpus, database, metrics=["inform", "success", "bleu"])
    assert result.n_dialogues == 1 and result.n_turns == 0
    assert result.inform == 100.0  # a taxi goal needs no venue
    assert result.success == 0.0  # ... but its phone number was never given


def test_given_active_domains_are_estimated_only_where_absent(
    corpus: CorpusData, database: VenueDatabase
) -> None:
    data = _load("augpt", 20)
    next(iter(data.values()))[0].pop("active_domains")
    result = _score(data, corpus, database, metrics=["inform"])
    assert result.options.estimated_active_domain_turns == 1
    state_mode = _score(data, corpus, database, metrics=["inform"], active_domains="state")
    assert state_mode.options.estimated_active_domain_turns == result.n_turns


def test_dst_against_gold_states(corpus: CorpusData, database: VenueDatabase) -> None:
    gold = {
        d: [{"response": "ok", "state": state} for state in states]
        for d, states in list(corpus.gold_states.items())[:50]
    }
    perfect = _score(gold, corpus, database, metrics=["dst"])
    assert perfect.dst is not None
    assert perfect.dst.joint_accuracy == 100.0
    assert perfect.dst.slot_f1 == pytest.approx(100.0)
    predicted = _score(_load("augpt", 50), corpus, database, metrics=["dst"])
    assert predicted.dst is not None
    assert 0 < predicted.dst.joint_accuracy < 100
    assert 50 < predicted.dst.slot_f1 < 100


def test_parallel_and_serial_give_identical_results(
    corpus: CorpusData, database: VenueDatabase
) -> None:
    data = _load("soloist", 80)
    kw: dict[str, Any] = {"metrics": ["inform", "success", "bleu", "richness"]}
    serial = _score(data, corpus, database, parallel=False, **kw)
    parallel = _score(data, corpus, database, parallel=True, **kw)
    assert serial.model_dump() == parallel.model_dump()


def test_background_call_falls_back_when_the_child_fails() -> None:
    calls: list[int] = []

    def compute() -> list[str]:
        if os.getpid() != parent:
            raise RuntimeError("child fails")
        calls.append(1)
        return ["A", "B"]

    parent = os.getpid()
    job = BackgroundCall(compute, parallel=True)
    assert job.result() == ["A", "B"]
    assert calls == [1]  # computed in-process after the child failed
    job.close()
    job.close()


def test_background_call_returns_the_child_result() -> None:
    parent = os.getpid()
    job = BackgroundCall(lambda: (os.getpid() != parent, ["x"] * 50000), parallel=True)
    assert job.result() == (True, ["x"] * 50000)  # large enough to fill a pipe


def test_background_call_close_without_result() -> None:
    job = BackgroundCall(lambda: ["X"] * 50000, parallel=True)
    job.close()
    assert job.result() == ["X"] * 50000


def test_bad_options_raise(corpus: CorpusData) -> None:
    with pytest.raises(UsageError):
        evaluate({"sng0073": []}, metrics=["bleu", "meteor"], corpus=corpus)
    with pytest.raises(UsageError):
        evaluate({"sng0073": []}, metrics=[], corpus=corpus)
    with pytest.raises(UsageError):
        evaluate({"sng0073": []}, active_domains="oracle", corpus=corpus)  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match="<predictions>: 1 unknown dialogue id"):
        evaluate({"sng9999": []}, corpus=corpus)


def test_summary(corpus: CorpusData, database: VenueDatabase) -> None:
    result = _score(_load("hdsa", 100), corpus, database)
    summary = to_summary(result, seed=1, resamples=300)
    assert summary.scheme == SCHEME == result.scheme
    assert Summary.model_validate_json(summary.model_dump_json()).benchmark == "multiwoz"
    assert summary.outcomes["success"] + summary.outcomes["failure"] == 100
    assert "dst" in " ".join(summary.warnings)
    assert not any(name.startswith("multiwoz.dst") for name in summary.metrics)
    for name in ("inform", "success", "bleu", "combined", "richness.avg_length"):
        micro = summary.metrics[f"multiwoz.{name}"].micro
        assert micro.value is not None and micro.ci_low is not None and micro.ci_high is not None
        assert micro.ci_low <= micro.value <= micro.ci_high
        assert micro.ci_low < micro.ci_high
    unique = summary.metrics["multiwoz.richness.unique_words"].micro
    assert unique.ci_low is None and unique.value == result.richness.unique_words  # type: ignore[union-attr]
    hotel = summary.metrics["multiwoz.inform"].by_group["hotel"]
    assert hotel.value == result.by_domain["hotel"].inform
    assert hotel.n == result.by_domain["hotel"].dialogues
    again = to_summary(result, seed=1, resamples=300)
    assert again.metrics == summary.metrics
    other = to_summary(result, seed=2, resamples=300)
    assert other.metrics["multiwoz.bleu"].micro != summary.metrics["multiwoz.bleu"].micro


def test_summary_of_one_dialogue_has_degenerate_intervals(corpus: CorpusData) -> None:
    result = evaluate({"sng0073": [{"response": "[taxi_phone]"}]}, corpus=corpus)
    summary = to_summary(result)
    micro = summary.metrics["multiwoz.success"].micro
    assert micro.value == micro.ci_low == micro.ci_high == 100.0


def test_shared_bootstrap_agrees_with_todeval_stats(
    corpus: CorpusData, database: VenueDatabase
) -> None:
    """For a plain mean the shared-resample interval is todeval.stats' interval (up to noise)."""
    from todeval.stats import bootstrap_mean

    result = _score(_load("augpt", 400), corpus, database, metrics=["inform", "success"])
    ours = to_summary(result).metrics["multiwoz.inform"].micro
    per_dialogue = [[100.0 * bool(d.inform_total)] for d in result.dialogues]
    reference = bootstrap_mean(per_dialogue, seed=0, label="inform")
    assert ours.value == pytest.approx(reference.value)
    assert ours.ci_low == pytest.approx(reference.ci_low, abs=1.0)
    assert ours.ci_high == pytest.approx(reference.ci_high, abs=1.0)
