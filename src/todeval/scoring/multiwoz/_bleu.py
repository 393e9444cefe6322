"""Corpus BLEU (sacrebleu defaults: 13a tokenisation, exponential smoothing) from cached stats.

Corpus BLEU depends only on summed sufficient statistics (hypothesis length, reference length,
matched and total n-grams for n = 1..4). Each turn's statistics are computed once; a dialogue's
are their sum, so a bootstrap over dialogues recomputes corpus BLEU from resampled sums without
re-tokenising anything. The point estimate goes through sacrebleu's own ``compute_bleu``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

ORDER = 4
N_STATS = 2 + 2 * ORDER
Stats = tuple[int, ...]
_LOG_ZERO = -9999999999.0  # sacrebleu's floor for log(0)


def _ngrams(tokens: list[str]) -> Counter[tuple[str, ...]]:
    grams: Counter[tuple[str, ...]] = Counter()
    for n in range(1, ORDER + 1):
        grams.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return grams


class BleuStatistics:
    """Per-turn BLEU statistics against one reference per turn; memoises tokenisation."""

    def __init__(self) -> None:
        from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

        self._tokenize = Tokenizer13a()
        self._memo: dict[str, tuple[Counter[tuple[str, ...]], int]] = {}

    def _grams(self, text: str) -> tuple[Counter[tuple[str, ...]], int]:
        cached = self._memo.get(text)
        if cached is None:
            tokens = str(self._tokenize(text.rstrip())).split()
            cached = (_ngrams(tokens), len(tokens))
            self._memo[text] = cached
        return cached

    def turn(self, hypothesis: str, reference: str) -> Stats:
        """``(hyp_len, ref_len, correct_1..4, total_1..4)`` of one turn."""
        hyp, hyp_len = self._grams(hypothesis)
        ref, ref_len = self._grams(reference)
        correct = [0] * ORDER
        total = [0] * ORDER
        for gram, count in hyp.items():
            n = len(gram) - 1
            total[n] += count
            matched = ref.get(gram)
            if matched:
                correct[n] += min(count, matched)
        return (hyp_len, ref_len, *correct, *total)


def sum_stats(stats: Sequence[Stats]) -> Stats:
    """Element-wise sum of statistics tuples."""
    out = [0] * N_STATS
    for s in stats:
        for i, v in enumerate(s):
            out[i] += v
    return tuple(out)


def corpus_bleu(stats: Stats) -> float:
    """Corpus BLEU (0-100) from summed statistics, computed by sacrebleu."""
    from sacrebleu.metrics.bleu import BLEU

    score = BLEU.compute_bleu(
        correct=list(stats[2 : 2 + ORDER]),
        total=list(stats[2 + ORDER :]),
        sys_len=int(stats[0]),
        ref_len=int(stats[1]),
        smooth_method="exp",
    )
    return float(score.score)


def corpus_bleu_many(stats: Any) -> Any:
    """Vectorised :func:`corpus_bleu` for a ``(k, 10)`` numpy array of summed statistics.

    Mirrors sacrebleu's formula: brevity penalty, exponential smoothing of zero matches
    (1/2, 1/4, ... of one match), a missing n-gram order gives a score of (nearly) 0.
    """
    import numpy as np

    stats = np.asarray(stats, dtype=float)
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct, total = stats[:, 2 : 2 + ORDER], stats[:, 2 + ORDER :]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1.0 - ref_len / np.maximum(sys_len, 1e-300)), 0.0),
            1.0,
        )
        zero = correct == 0
        smooth = np.power(2.0, np.cumsum(zero, axis=1))
        precision = np.where(zero, 100.0 / (smooth * total), 100.0 * correct / total)
        # An order with no hypothesis n-grams stops the loop: it and later orders stay 0.
        missing = np.cumsum(total == 0, axis=1) > 0
        precision = np.where(missing, 0.0, precision)
        safe = np.where(precision > 0, precision, 1.0)
        logs = np.where(precision > 0, np.log(safe), _LOG_ZERO)
        score = bp * np.exp(logs.sum(axis=1) / ORDER)
    score = np.where(correct.sum(axis=1) == 0, 0.0, score)
    return score

