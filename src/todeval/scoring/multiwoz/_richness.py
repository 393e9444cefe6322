"""Lexical richness of the normalised responses.

Tokens follow the ``lexical_diversity`` package's tokenizer used by the standard evaluator:
a fixed list of punctuation strings is deleted (in order), whitespace runs collapse to one
space, the text is lower-cased and split on single spaces -- so leading or trailing spaces
give an empty token, which counts like any other.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise

# The tokenizer deletes, in this order: ``, '', ', . , ? ! ) ( % / - _ -LRB- -RRB- SYM : ;
# ('' goes with ', and -LRB-/-RRB- can never match once - is gone), so it is done in three
# steps that give the same result: the single characters up to _, then SYM, then : and ;.
_DELETE_FIRST = str.maketrans("", "", "'.,?!)(%/-_")
_DELETE_LAST = str.maketrans("", "", ":;")
_SPACES = re.compile(r"\s+")
MSTTR_WINDOW = 50


def tokenize(text: str) -> list[str]:
    """Richness tokens of one normalised response."""
    text = text.replace("``", "").translate(_DELETE_FIRST).replace("SYM", "")
    return _SPACES.sub(" ", text.translate(_DELETE_LAST)).lower().split(" ")


@dataclass(frozen=True)
class Richness:
    avg_length: float
    entropy: float
    cond_entropy: float
    unique_words: int
    unique_bigrams: int
    unique_trigrams: int
    msttr: float


def _msttr(tokens: Sequence[str], window: int) -> float:
    """Mean segmental type-token ratio over full windows (whole-text TTR when too short)."""
    if not tokens:
        return 0.0
    if len(tokens) < window + 1:
        return len(set(tokens)) / len(tokens)
    segments = len(tokens) // window
    ratios = [len(set(tokens[i * window : (i + 1) * window])) / window for i in range(segments)]
    return sum(ratios) / segments


def richness(turn_tokens: Iterable[list[str]]) -> Richness:
    """Average length, unigram entropy, conditional bigram entropy, distinct n-grams, MSTTR-50."""
    # Counted in one pass each, in turn order (so every counter's order, and with it every
    # floating-point sum below, is the same as counting turn by turn).
    lists = list(turn_tokens)
    turns = len(lists)
    all_tokens = list(chain.from_iterable(lists))
    unigrams: Counter[str] = Counter(all_tokens)
    bigrams: Counter[tuple[str, str]] = Counter(chain.from_iterable(map(pairwise, lists)))
    trigrams = set(chain.from_iterable(zip(t, t[1:], t[2:], strict=False) for t in lists))
    total = sum(unigrams.values())
    if turns == 0 or total == 0:
        return Richness(0.0, 0.0, 0.0, 0, 0, 0, 0.0)
    entropy = -sum(c / total * math.log2(c / total) for c in unigrams.values())
    cond_entropy = -sum(
        c / total * math.log2(c / unigrams[head]) for (head, _), c in bigrams.items()
    )
    return Richness(
        avg_length=total / turns,
        entropy=entropy,
        cond_entropy=cond_entropy,
        unique_words=len(unigrams),
        unique_bigrams=len(bigrams),
        unique_trigrams=len(trigrams),
        msttr=_msttr(all_tokens, MSTTR_WINDOW),
    )
