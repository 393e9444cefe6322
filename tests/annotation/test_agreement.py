"""Agreement statistics against reference libraries (to 1e-9) and hand computations."""

from __future__ import annotations

import importlib
import math
import os
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from todeval.annotation.agreement import (
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    gold_cohen,
    krippendorff_alpha,
    label_alpha,
    label_cohen,
    label_fleiss,
    majority,
    masi_distance,
    nominal,
    set_alpha,
)

LABELS = ("a", "b", "c", "d", "e")
TOL = 1e-9


def reference(name: str) -> ModuleType:
    """A reference library (the dev extra); with CI=true its absence fails the test."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"reference library {name} missing (pip install -e .[dev])"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " -- required with CI=true")
        pytest.skip(message)


def random_ratings(
    seed: int, n_items: int = 40, coders: int = 3, missing: float = 0.0, nonempty: bool = False
) -> dict[str, dict[str, frozenset[str]]]:
    rng = np.random.default_rng(seed)
    base = {i: rng.random(len(LABELS)) < 0.4 for i in range(n_items)}
    out: dict[str, dict[str, frozenset[str]]] = {}
    for i in range(n_items):
        answers = {}
        for c in range(coders):
            if c >= 2 and rng.random() < missing:
                continue
            flip = rng.random(len(LABELS)) < 0.25
            chosen = base[i] ^ flip
            s = frozenset(label for label, on in zip(LABELS, chosen, strict=True) if on)
            if nonempty and not s:
                s = frozenset({LABELS[int(rng.integers(len(LABELS)))]})
            answers[f"coder{c}"] = s
        out[f"item{i:03d}"] = answers
    return out


def hand_cohen(a: list[Any], b: list[Any]) -> float:
    cats = sorted(set(a) | set(b), key=str)
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (po - pe) / (1 - pe)


@pytest.mark.parametrize("seed", range(8))
def test_cohen_matches_hand_and_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = [int(x) for x in rng.integers(0, 4, size=60)]
    b = [x if rng.random() < 0.6 else int(rng.integers(0, 4)) for x in a]
    ours = cohen_kappa(a, b)
    assert abs(ours - hand_cohen(a, b)) < TOL
    inter_rater = reference("statsmodels.stats.inter_rater")
    table = np.zeros((4, 4))
    for x, y in zip(a, b, strict=True):
        table[x, y] += 1
    assert abs(ours - float(inter_rater.cohens_kappa(table).kappa)) < TOL


@pytest.mark.parametrize("seed", range(8))
def test_cohen_matches_sklearn(seed: int) -> None:
    metrics = reference("sklearn.metrics")
    ratings = random_ratings(seed, coders=2)
    items = sorted(ratings)
    for label in LABELS:
        x = [int(label in ratings[i]["coder0"]) for i in items]
        y = [int(label in ratings[i]["coder1"]) for i in items]
        expected = float(metrics.cohen_kappa_score(x, y))
        assert abs(label_cohen(ratings, items, label) - expected) < TOL


@pytest.mark.parametrize("seed", range(8))
def test_fleiss_matches_statsmodels(seed: int) -> None:
    inter_rater = reference("statsmodels.stats.inter_rater")
    ratings = random_ratings(seed, coders=4)
    items = sorted(ratings)
    for label in LABELS:
        table = np.array(
            [[sum(label in s for s in ratings[i].values()), 0] for i in items], dtype=float
        )
        table[:, 1] = 4 - table[:, 0]
        expected = float(inter_rater.fleiss_kappa(table, method="fleiss"))
        assert abs(label_fleiss(ratings, items, label) - expected) < TOL
        assert abs(fleiss_kappa(table) - expected) < TOL
    # multi-category table
    rng = np.random.default_rng(seed)
    table = rng.multinomial(5, [0.5, 0.3, 0.2], size=30).astype(float)
    assert abs(fleiss_kappa(table) - float(inter_rater.fleiss_kappa(table))) < TOL


@pytest.mark.parametrize("seed", range(8))
def test_label_alpha_matches_krippendorff(seed: int) -> None:
    kd = reference("krippendorff")
    ratings = random_ratings(seed, coders=4, missing=0.3)
    items = sorted(ratings)
    coders = sorted({c for a in ratings.values() for c in a})
    for label in LABELS:
        data = np.array(
            [
                [float(label in ratings[i][c]) if c in ratings[i] else np.nan for i in items]
                for c in coders
            ]
        )
        expected = float(kd.alpha(reliability_data=data, level_of_measurement="nominal"))
        assert abs(label_alpha(ratings, items, label) - expected) < TOL


@pytest.mark.parametrize("seed", range(8))
def test_masi_alpha_matches_nltk(seed: int) -> None:
    agreement = reference("nltk.metrics.agreement")
    distance = reference("nltk.metrics.distance")
    ratings = random_ratings(seed, coders=3, missing=0.2, nonempty=True)
    items = sorted(ratings)
    data = [(c, i, s) for i in items for c, s in ratings[i].items()]
    task = agreement.AnnotationTask(data=data, distance=distance.masi_distance)
    assert abs(set_alpha(ratings, items, masi_distance) - float(task.alpha())) < TOL
    for x, y in [(data[0][2], data[1][2]), (data[2][2], data[5][2])]:
        assert abs(masi_distance(x, y) - distance.masi_distance(x, y)) < TOL


def test_alpha_by_hand() -> None:
    # Krippendorff (2011), the 4 coders x 12 units nominal example: alpha = 0.743
    rows = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[r[u] for r in rows if r[u] is not None] for u in range(12)]
    assert round(krippendorff_alpha(units), 3) == 0.743


def test_masi_distance_values() -> None:
    a, b = frozenset("ab"), frozenset("a")
    assert masi_distance(a, a) == 0.0
    assert abs(masi_distance(a, b) - (1 - 0.5 * 2 / 3)) < TOL
    assert abs(masi_distance(frozenset("ab"), frozenset("bc")) - (1 - 1 / 3 * 1 / 3)) < TOL
    assert masi_distance(frozenset("a"), frozenset("b")) == 1.0
    assert masi_distance(frozenset(), frozenset()) == 0.0


def test_degenerate_cases_are_nan() -> None:
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))
    with pytest.raises(ValueError):
        fleiss_kappa(np.array([[2, 0], [1, 1], [3, 0]]))


def test_majority_and_gold() -> None:
    answers = {"x": frozenset("ab"), "y": frozenset("a"), "z": frozenset("bc")}
    assert majority(answers) == frozenset("ab")
    ratings = random_ratings(3, coders=3)
    items = sorted(ratings)
    gold = {i: majority(ratings[i]) for i in items}
    for label in LABELS:
        value = gold_cohen(ratings, gold, items, label)
        assert math.isnan(value) or abs(value - 1.0) < TOL


def test_report_is_seeded_and_brackets_the_value() -> None:
    ratings = random_ratings(5, coders=3)
    gold = {i: majority(s) for i, s in ratings.items()}
    one = agreement_report(ratings, gold, seed=1, resamples=200)
    two = agreement_report(ratings, gold, seed=1, resamples=200)
    assert one == two
    assert one.n_items == 40 and one.annotators == ["coder0", "coder1", "coder2"]
    for row in one.labels:
        for fig in (row.cohen, row.fleiss, row.alpha):
            assert fig.low <= fig.value <= fig.high
        assert row.gold_cohen is not None and abs(row.gold_cohen.value - 1.0) < TOL
    assert one.gold_exact is not None and one.gold_exact.value == 1.0
    assert one.masi_alpha.low <= one.masi_alpha.value <= one.masi_alpha.high


@pytest.mark.parametrize("seed", range(4))
def test_bootstrap_replicates_equal_the_plain_statistics_on_resampled_items(seed: int) -> None:
    from todeval.annotation import _weighted as w

    ratings = random_ratings(seed, n_items=25, coders=3, missing=0.3, nonempty=True)
    items = sorted(ratings)
    coders = sorted({c for a in ratings.values() for c in a})
    gold = {i: majority(ratings[i]) | {"e"} for i in items[::2]}
    rng = np.random.default_rng(seed)
    weights = w.resample_weights(len(items), rng, 5)
    for row in weights:
        # the resampled item list (duplicates renamed so they stay separate items)
        drawn = [i for i, k in zip(items, row, strict=True) for _ in range(int(k))]
        names = [f"{i}#{n}" for n, i in enumerate(drawn)]
        resampled = {f"{i}#{n}": ratings[i] for n, i in enumerate(drawn)}
        rgold = {f"{i}#{n}": gold[i] for n, i in enumerate(drawn) if i in gold}
        W = row[None, :]
        set_units: list[list[object]] = [list(ratings[i].values()) for i in items]
        assert_close(
            w.alpha_values(W, set_units, lambda x, y: masi_distance(x, y))[0],  # type: ignore[arg-type]
            set_alpha(resampled, names, masi_distance),
        )
        for label in LABELS:
            m = w.binary_matrix(ratings, items, coders, label)
            units: list[list[object]] = [[bool(v) for v in r if not math.isnan(v)] for r in m]
            assert_close(w.alpha_values(W, units, nominal)[0], label_alpha(resampled, names, label))
            assert_close(w.mean_pairwise_cohen(W, m)[0], label_cohen(resampled, names, label))
            assert_close(w.fleiss_binary(W, m)[0], label_fleiss(resampled, names, label))
            keyed = [i in gold for i in items]
            maj = np.array(
                [
                    float(label in majority(ratings[i])) if k else np.nan
                    for i, k in zip(items, keyed, strict=True)
                ]
            )
            ref = np.array([float(label in gold.get(i, frozenset())) for i in items])
            assert_close(w.cohen_binary(W, maj, ref)[0], gold_cohen(resampled, rgold, names, label))


def assert_close(a: float, b: float) -> None:
    assert (math.isnan(a) and math.isnan(b)) or abs(a - b) < TOL, (a, b)
