"""Agreement statistics between annotators, and between the annotator majority and the gold.

Every answer is a label set (a multi-choice answer is the chosen ids; a pairwise answer is the
one-element set of ``a``, ``b`` or ``cant-tell``). From the answers this module computes

* per label, the binary decision "the label is in the set": Cohen's kappa (two annotators;
  with more, the mean over pairs), Fleiss' kappa (items every annotator answered) and
  Krippendorff's alpha (nominal; items with at least two answers);
* Krippendorff's alpha over whole label sets with the MASI distance (partial credit for
  overlapping sets) and with the nominal distance (exact set match);
* with a gold key, Cohen's kappa of the annotators' majority (a label is in the majority set
  when more than half of an item's annotators chose it) against the gold, per label.

Each figure carries a percentile-bootstrap interval resampling items. Degenerate cases (one
category only, so the chance agreement is 1) give ``nan``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

from todeval.annotation import _weighted as _w
from todeval.stats.bootstrap import DEFAULT_LEVEL, interval, seeded_rng

V = TypeVar("V", bound=Hashable)
LabelSet = frozenset[str]
# item id -> annotator -> label set
Ratings = Mapping[str, Mapping[str, LabelSet]]


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two equally long sequences of nominal values."""
    if len(a) != len(b) or not a:
        raise ValueError("cohen_kappa needs two non-empty sequences of equal length")
    n = len(a)
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[v] * cb[v] for v in ca) / (n * n)
    if expected >= 1.0:
        return math.nan
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of an items x categories count table (every row sums to the same n)."""
    counts = np.asarray(table, dtype=float)
    n_items = counts.shape[0]
    raters = counts.sum(axis=1)
    if n_items == 0 or not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise ValueError("fleiss_kappa needs items rated by the same number (>= 2) of raters")
    n = raters[0]
    p_j = counts.sum(axis=0) / (n_items * n)
    p_i = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
    p_bar = float(p_i.mean())
    p_e = float((p_j * p_j).sum())
    if p_e >= 1.0:
        return math.nan
    return (p_bar - p_e) / (1.0 - p_e)


def nominal(x: Hashable, y: Hashable) -> float:
    return 0.0 if x == y else 1.0


def masi_distance(x: LabelSet, y: LabelSet) -> float:
    """MASI distance (Passonneau 2006) as in ``nltk.metrics.distance.masi_distance`` (nltk
    3.9: monotonicity weights 1, 2/3, 1/3, 0); two empty sets are at distance 0."""
    inter, union = len(x & y), len(x | y)
    if union == 0:
        return 0.0
    if len(x) == len(y) == inter:
        m = 1.0
    elif inter == min(len(x), len(y)):
        m = 2 / 3
    elif inter > 0:
        m = 1 / 3
    else:
        m = 0.0
    return 1.0 - inter / union * m


def krippendorff_alpha(
    units: Sequence[Sequence[V]], distance: Callable[[V, V], float] = nominal
) -> float:
    """Krippendorff's alpha over units, each the values its coders gave (missing left out);
    units with fewer than two values are not pairable and are ignored."""
    pairable = [Counter(u) for u in units if len(u) >= 2]
    total: Counter[V] = Counter()
    for c in pairable:
        total.update(c)
    n = sum(total.values())
    if n < 2:
        return math.nan
    observed = 0.0
    for c in pairable:
        m = sum(c.values())
        observed += _pair_sum(c, distance) / (m - 1)
    observed /= n
    expected = _pair_sum(total, distance) / (n * (n - 1))
    if expected <= 0.0:
        return math.nan
    return 1.0 - observed / expected


def _pair_sum(freqs: Counter[V], distance: Callable[[V, V], float]) -> float:
    return sum(nj * nk * distance(j, k) for j, nj in freqs.items() for k, nk in freqs.items())


# -- over ratings ----------------------------------------------------------------------------


def annotators_of(ratings: Ratings) -> list[str]:
    return sorted({a for answers in ratings.values() for a in answers})


def labels_in(ratings: Ratings, gold: Mapping[str, LabelSet] | None = None) -> list[str]:
    seen = {label for answers in ratings.values() for s in answers.values() for label in s}
    if gold:
        seen |= {label for s in gold.values() for label in s}
    return sorted(seen)


def label_cohen(ratings: Ratings, items: Sequence[str], label: str) -> float:
    """Binary Cohen's kappa for ``label``: mean over annotator pairs of the items both did."""
    coders = annotators_of({i: ratings[i] for i in items})
    values = []
    for x, y in itertools.combinations(coders, 2):
        both = [i for i in items if x in ratings[i] and y in ratings[i]]
        if not both:
            continue
        k = cohen_kappa(
            [label in ratings[i][x] for i in both], [label in ratings[i][y] for i in both]
        )
        values.append(k)
    return float(np.mean(values)) if values and not any(map(math.isnan, values)) else math.nan


def label_fleiss(ratings: Ratings, items: Sequence[str], label: str) -> float:
    """Binary Fleiss' kappa for ``label`` over the items answered by every annotator."""
    coders = annotators_of(ratings)
    full = [i for i in items if all(c in ratings[i] for c in coders)]
    if not full or len(coders) < 2:
        return math.nan
    yes = np.array([sum(label in ratings[i][c] for c in coders) for i in full], dtype=float)
    return fleiss_kappa(np.stack([yes, len(coders) - yes], axis=1))


def label_alpha(ratings: Ratings, items: Sequence[str], label: str) -> float:
    return krippendorff_alpha([[label in s for s in ratings[i].values()] for i in items])


def set_alpha(
    ratings: Ratings, items: Sequence[str], distance: Callable[[LabelSet, LabelSet], float]
) -> float:
    return krippendorff_alpha([list(ratings[i].values()) for i in items], distance)


def majority(answers: Mapping[str, LabelSet]) -> LabelSet:
    """The labels more than half of the item's annotators chose."""
    counts = Counter(label for s in answers.values() for label in s)
    return frozenset(label for label, c in counts.items() if c * 2 > len(answers))


def gold_cohen(
    ratings: Ratings, gold: Mapping[str, LabelSet], items: Sequence[str], label: str
) -> float:
    both = [i for i in items if i in gold]
    if not both:
        return math.nan
    return cohen_kappa(
        [label in majority(ratings[i]) for i in both], [label in gold[i] for i in both]
    )


# -- the report ------------------------------------------------------------------------------


class Figure(BaseModel):
    """One statistic: its value on all items and a bootstrap interval resampling items."""

    value: float
    low: float
    high: float
    n_items: int


class LabelFigures(BaseModel):
    label: str
    prevalence: float  # share of all answers containing the label
    cohen: Figure
    fleiss: Figure
    alpha: Figure
    gold_cohen: Figure | None = None


class AgreementReport(BaseModel):
    annotators: list[str]
    n_items: int
    n_answers: int
    level: float
    resamples: int
    labels: list[LabelFigures]
    masi_alpha: Figure
    exact_alpha: Figure
    gold_exact: Figure | None = None  # share of items whose majority set equals the gold set


def _figure(value: float, replicates: np.ndarray, n_items: int, level: float) -> Figure:
    reps = replicates[~np.isnan(replicates)]
    low, high = interval(reps, level) if len(reps) else (math.nan, math.nan)
    return Figure(value=value, low=low, high=high, n_items=n_items)


def agreement_report(
    ratings: Ratings,
    gold: Mapping[str, LabelSet] | None = None,
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = DEFAULT_LEVEL,
) -> AgreementReport:
    """Every statistic of this module over ``ratings`` (and ``gold``, when given).

    Point values come from the plain functions above; the intervals from the same statistics
    over ``resamples`` item resamples at once (:mod:`._weighted`)."""
    items = sorted(ratings)
    if not items:
        raise ValueError("no answers")
    labels = labels_in(ratings, gold)
    coders = annotators_of(ratings)
    all_sets = [s for i in items for s in ratings[i].values()]
    n = len(items)

    def weights(name: str) -> np.ndarray:
        return _w.resample_weights(n, seeded_rng(seed, name), resamples)

    keyed = [bool(gold) and i in (gold or {}) for i in items]
    in_gold = np.array(keyed, dtype=float)
    majorities = [majority(ratings[i]) for i in items]
    rows = []
    for label in labels:
        matrix = _w.binary_matrix(ratings, items, coders, label)
        gold_fig = None
        if gold:
            maj = np.array(
                [float(label in s) if k else np.nan for s, k in zip(majorities, keyed, strict=True)]
            )
            ref = np.array([float(label in gold.get(i, frozenset())) for i in items])
            gold_fig = _figure(
                gold_cohen(ratings, gold, items, label),
                _w.cohen_binary(weights(f"gold:{label}"), maj, ref),
                n,
                level,
            )
        units: list[list[object]] = [[bool(v) for v in row if not math.isnan(v)] for row in matrix]
        rows.append(
            LabelFigures(
                label=label,
                prevalence=sum(label in s for s in all_sets) / len(all_sets),
                cohen=_figure(
                    label_cohen(ratings, items, label),
                    _w.mean_pairwise_cohen(weights(f"cohen:{label}"), matrix),
                    n,
                    level,
                ),
                fleiss=_figure(
                    label_fleiss(ratings, items, label),
                    _w.fleiss_binary(weights(f"fleiss:{label}"), matrix),
                    n,
                    level,
                ),
                alpha=_figure(
                    label_alpha(ratings, items, label),
                    _w.alpha_values(weights(f"alpha:{label}"), units, nominal),
                    n,
                    level,
                ),
                gold_cohen=gold_fig,
            )
        )
    gold_exact = None
    if gold:
        hits = np.array(
            [float(k and s == gold[i]) for i, s, k in zip(items, majorities, keyed, strict=True)]
        )
        scored = [s == gold[i] for i, s, k in zip(items, majorities, keyed, strict=True) if k]
        value = sum(scored) / len(scored) if scored else math.nan
        gold_exact = _figure(value, _w.share(weights("gold-exact"), hits, in_gold), n, level)
    set_units: list[list[object]] = [list(ratings[i].values()) for i in items]
    return AgreementReport(
        annotators=coders,
        n_items=n,
        n_answers=len(all_sets),
        level=level,
        resamples=resamples,
        labels=rows,
        masi_alpha=_figure(
            set_alpha(ratings, items, masi_distance),
            _w.alpha_values(weights("masi"), set_units, _masi_any),
            n,
            level,
        ),
        exact_alpha=_figure(
            set_alpha(ratings, items, nominal),
            _w.alpha_values(weights("exact"), set_units, nominal),
            n,
            level,
        ),
        gold_exact=gold_exact,
    )


def _masi_any(x: object, y: object) -> float:
    assert isinstance(x, frozenset) and isinstance(y, frozenset)
    return masi_distance(x, y)


__all__ = [
    "AgreementReport",
    "Figure",
    "LabelFigures",
    "Ratings",
    "agreement_report",
    "cohen_kappa",
    "fleiss_kappa",
    "gold_cohen",
    "krippendorff_alpha",
    "label_alpha",
    "label_cohen",
    "label_fleiss",
    "majority",
    "masi_distance",
    "nominal",
    "set_alpha",
]
