"""The partial-ratio similarity the standard evaluator's numbers depend on.

The standard evaluator uses fuzzywuzzy's ``partial_ratio`` backed by python-Levenshtein. That
function does not search for the best-matching window of the longer string (as
``rapidfuzz.fuzz.partial_ratio`` does): it only tries windows that start where a matching block
of a Levenshtein alignment starts, takes the best indel similarity among them and rounds it to
an integer. rapidfuzz's optimal windows score higher on some pairs (``'adc theatre'`` vs
``'mumford theatre'``: 90.0 against 86), which changes published Inform/Success figures, so
the heuristic is rebuilt here from rapidfuzz primitives (Levenshtein opcodes, Indel similarity).
"""

from __future__ import annotations


def partial_ratio(a: str, b: str) -> int:
    """fuzzywuzzy-compatible partial ratio (0-100, rounded half to even)."""
    from rapidfuzz.distance import Indel, Levenshtein

    if a == b:
        return 100
    if not a or not b:
        return 0
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    best = 0.0
    for block in Levenshtein.opcodes(shorter, longer).as_matching_blocks():
        start = max(block.b - block.a, 0)
        window = longer[start : start + len(shorter)]
        score = Indel.normalized_similarity(shorter, window)
        if score > 0.995:
            return 100
        best = max(best, score)
    return round(100 * best)


def fuzzy_match(a: str, b: str, threshold: int) -> bool:
    """True when :func:`partial_ratio` of ``a`` and ``b`` is at least ``threshold``."""
    return partial_ratio(a, b) >= threshold


def fuzzy_candidates(value: str, choices: list[str], threshold: int) -> list[str]:
    """The choices that can reach ``threshold`` against ``value`` (a fast, safe pre-filter).

    rapidfuzz's optimal partial ratio is never below the heuristic one (it searches a superset
    of the windows), so choices scoring under ``threshold - 1`` with it are dropped unchecked.
    """
    from rapidfuzz import fuzz, process

    hits = process.extract(
        value, choices, scorer=fuzz.partial_ratio, score_cutoff=threshold - 1, limit=None
    )
    return [choice for choice, _, _ in hits]
