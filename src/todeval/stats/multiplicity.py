"""Adjusting p-values for the number of comparisons made at once.

``compare`` of N runs on M metrics makes N-1 x M (or more) tests; at a 5% level one of twenty
true nulls is "significant" by chance. The family is every test one invocation prints.

* ``holm`` (the default) controls the family-wise error rate: the chance of any false
  "significant" is at most the level, under any dependence between the tests;
* ``bh`` (Benjamini-Hochberg) controls the false discovery rate: the expected share of false
  ones among those called significant (valid for independent or positively dependent tests);
* ``none`` leaves them raw.

Both give the same adjusted p-values as ``statsmodels.stats.multitest.multipletests``
(``holm``, ``fdr_bh``); ``tests/stats/test_multiplicity.py`` checks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Adjustment = Literal["holm", "bh", "none"]
ADJUSTMENTS: tuple[Adjustment, ...] = ("holm", "bh", "none")
ADJUSTMENT_NAMES = {"holm": "Holm", "bh": "BH", "none": ""}
"""How an adjusted p is named in a sentence: ``Holm p 0.011``."""
ADJUSTMENT_TITLES = {
    "holm": "Holm (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none (raw p-values)",
}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return [float(x) for x in adjusted]


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg step-up adjusted p-values (q-values), in the order given."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")[::-1]  # largest first
    ranks = m - np.arange(m)  # rank of each, counted from the smallest
    stepped = np.minimum.accumulate(p[order] * m / ranks)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return [float(x) for x in adjusted]


def adjust(p_values: Sequence[float], method: Adjustment) -> list[float]:
    """``p_values`` adjusted by ``method`` (``none``: unchanged)."""
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    return [float(p) for p in p_values]


__all__ = [
    "ADJUSTMENTS",
    "ADJUSTMENT_NAMES",
    "ADJUSTMENT_TITLES",
    "Adjustment",
    "adjust",
    "benjamini_hochberg",
    "holm",
]
