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
from functools import partial
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

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


def _figure(
    stat: Callable[[Sequence[str]], float],
    items: Sequence[str],
    rng: np.random.Generator,
    resamples: int,
    level: float,
) -> Figure:
    value = stat(items)
    reps = []
    n = len(items)
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        reps.append(stat([items[k] for k in idx]))
    arr = np.array([r for r in reps if not math.isnan(r)], dtype=float)
    low, high = interval(arr, level) if len(arr) else (math.nan, math.nan)
    return Figure(value=value, low=low, high=high, n_items=n)


def _cohen_stat(ratings: Ratings, label: str, items: Sequence[str]) -> float:
    return label_cohen(ratings, items, label)


def _fleiss_stat(ratings: Ratings, label: str, items: Sequence[str]) -> float:
    return label_fleiss(ratings, items, label)


def _alpha_stat(ratings: Ratings, label: str, items: Sequence[str]) -> float:
    return label_alpha(ratings, items, label)


def _gold_stat(
    ratings: Ratings, gold: Mapping[str, LabelSet], label: str, items: Sequence[str]
) -> float:
    return gold_cohen(ratings, gold, items, label)


def agreement_report(
    ratings: Ratings,
    gold: Mapping[str, LabelSet] | None = None,
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = DEFAULT_LEVEL,
) -> AgreementReport:
    """Every statistic of this module over ``ratings`` (and ``gold``, when given)."""
    items = sorted(ratings)
    if not items:
        raise ValueError("no answers")
    labels = labels_in(ratings, gold)
    all_sets = [s for i in items for s in ratings[i].values()]

    def fig(name: str, stat: Callable[[Sequence[str]], float]) -> Figure:
        return _figure(stat, items, seeded_rng(seed, name), resamples, level)

    rows = []
    for label in labels:
        rows.append(
            LabelFigures(
                label=label,
                prevalence=sum(label in s for s in all_sets) / len(all_sets),
                cohen=fig(f"cohen:{label}", partial(_cohen_stat, ratings, label)),
                fleiss=fig(f"fleiss:{label}", partial(_fleiss_stat, ratings, label)),
                alpha=fig(f"alpha:{label}", partial(_alpha_stat, ratings, label)),
                gold_cohen=(
                    fig(f"gold:{label}", partial(_gold_stat, ratings, gold, label))
                    if gold
                    else None
                ),
            )
        )
    gold_exact = None
    if gold:

        def exact(it: Sequence[str]) -> float:
            scored = [majority(ratings[i]) == gold[i] for i in it if i in gold]
            return sum(scored) / len(scored) if scored else math.nan

        gold_exact = fig("gold-exact", exact)
    return AgreementReport(
        annotators=annotators_of(ratings),
        n_items=len(items),
        n_answers=len(all_sets),
        level=level,
        resamples=resamples,
        labels=rows,
        masi_alpha=fig("masi", lambda it: set_alpha(ratings, it, masi_distance)),
        exact_alpha=fig("exact", lambda it: set_alpha(ratings, it, nominal)),
        gold_exact=gold_exact,
    )


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
