"""Per-turn counts and the dialogue bootstrap."""

from __future__ import annotations

from todeval.benchmarks.bargain.scoring import Counts, dialogue_bootstrap, score_turn, scores

CANDS = ["a", "b", "c", "d"]


def test_counts_per_id_with_duplicates_collapsed() -> None:
    t = score_turn(0, "Buyer", 1, CANDS, ["a", "b"], ["a", "a", "c", "zzz", "zzz"])
    assert (t.correct, t.missed, t.incorrect, t.invalid) == (1, 1, 1, 1)
    assert t.predicted == ["a", "c", "zzz"] and not t.failed


def test_an_unparseable_output_misses_every_gold_and_adds_nothing_to_precision() -> None:
    t = score_turn(0, "Buyer", 1, CANDS, ["a", "b"], None, raw="??")
    assert (t.correct, t.missed, t.incorrect, t.invalid, t.failed) == (0, 2, 0, 0, True)
    good = score_turn(1, "Buyer", 2, CANDS, ["a"], ["a"])
    c = Counts.of([t, good])
    assert c.precision == 1.0 and c.recall == 1 / 3 and c.failures == 1


def test_micro_macro_and_the_bootstrap_resample_dialogues() -> None:
    d1 = [score_turn(0, "A", 1, CANDS, ["a"], ["a"]), score_turn(1, "A", 2, CANDS, ["b"], ["a"])]
    d2 = [score_turn(0, "B", 1, CANDS, ["b"], ["b"])]
    est = dialogue_bootstrap([d1, d2], CANDS, seed=0, label="t", resamples=500)
    assert est["precision"].value == 2 / 3 and est["recall"].value == 2 / 3
    assert est["precision"].n == 3  # turns
    # per label: a P=1/2 R=1 F1=2/3; b P=1 R=1/2 F1=2/3
    assert abs(est["macro_f1"].value - 2 / 3) < 1e-12  # type: ignore[operator]
    low, high = est["f1"].ci_low, est["f1"].ci_high
    assert low is not None and high is not None and low <= 2 / 3 <= high
    # dialogue 2 alone is perfect, dialogue 1 alone is 1/2: the resamples span that range
    assert low >= 0.5 - 1e-12 and high <= 1.0
    assert est["failure_rate"].wilson_low is not None


def test_confusion_and_per_label() -> None:
    turns = [
        score_turn(0, "A", 1, CANDS, ["a"], ["b"]),
        score_turn(1, "A", 2, CANDS, ["a"], None),
        score_turn(2, "A", 3, CANDS, ["a", "b"], []),
    ]
    s = scores(turns, CANDS)
    assert s.confusion["a"] == {"b": 1, "(failure)": 1, "(none)": 1}
    assert s.confusion["b"] == {"(none)": 1}
    by = {x.label: x for x in s.per_label}
    assert by["a"].support == 3 and by["b"].predicted == 1 and by["b"].tp == 0
    assert set(s.by_depth) == {"1", "2", "3"}
