"""BLEU from cached statistics equals sacrebleu; richness tokenizer rules."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from todeval.scoring.multiwoz._bleu import (
    BleuStatistics,
    corpus_bleu,
    corpus_bleu_many,
    sum_stats,
    tokenize_13a,
    turn_statistics,
)
from todeval.scoring.multiwoz._corpus import CorpusData
from todeval.scoring.multiwoz._normalize import ResponseNormalizer
from todeval.scoring.multiwoz._richness import richness, tokenize

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"


@pytest.fixture(scope="module")
def corpus() -> CorpusData:
    return CorpusData()


def test_tokenize_13a_equals_sacrebleu_on_references(corpus: CorpusData) -> None:
    reference = Tokenizer13a()  # type: ignore[no-untyped-call]
    texts = [r for refs in corpus.references.values() for r in refs]
    assert [tokenize_13a(t) for t in texts] == [reference(t) for t in texts]


def test_tokenize_13a_equals_sacrebleu_on_random_strings() -> None:
    reference = Tokenizer13a()  # type: ignore[no-untyped-call]
    rng = random.Random(11)
    alphabet = "ab1 2.,-&;quotgl<>[]{}~`_/\\\n'\"?!:@#$%^*()+=|é"
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 30))) for _ in range(20000)]
    texts += ["&quot;a&amp;b&lt;c&gt;", "x<skipped>y", "a-\nb", "1-2", "3.5, 4,5 a.b"]
    assert [tokenize_13a(t) for t in texts] == [reference(t) for t in texts]


def test_corpus_bleu_equals_sacrebleu(corpus: CorpusData) -> None:
    data = json.loads(gzip.decompress((FIXTURES / "damd.json.gz").read_bytes()))
    normalize = ResponseNormalizer()
    hyps, refs = [], []
    for dialogue, turns in list(data.items())[:300]:
        for i, turn in enumerate(turns):
            hyps.append(normalize(turn["response"]))
            refs.append(corpus.references[dialogue][i])
    stats = BleuStatistics()
    ours = corpus_bleu(sum_stats([stats.turn(h, r) for h, r in zip(hyps, refs, strict=True)]))
    assert ours == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9)


def test_corpus_bleu_is_sacrebleu_compute_bleu_to_the_bit() -> None:
    from sacrebleu.metrics.bleu import BLEU

    rng = random.Random(5)
    cases = [(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), (0, 5, 0, 0, 0, 0, 0, 0, 0, 0)]
    for _ in range(20000):
        hyp, ref = rng.randint(0, 60), rng.randint(0, 60)
        total = [max(hyp - n, 0) for n in range(4)]
        correct = [rng.randint(0, t) if rng.random() < 0.8 else 0 for t in total]
        cases.append((hyp, ref, *correct, *total))
    for stats in cases:
        expected = BLEU.compute_bleu(
            correct=list(stats[2:6]),
            total=list(stats[6:]),
            sys_len=stats[0],
            ref_len=stats[1],
            smooth_method="exp",
        ).score
        assert corpus_bleu(stats) == expected, stats


def test_shipped_tokenized_references_are_their_13a_tokenisation(corpus: CorpusData) -> None:
    expected = {
        d: [" ".join(tokenize_13a(r.rstrip()).split()) for r in refs]
        for d, refs in corpus.references.items()
    }
    assert corpus.tokenized_references == expected


def test_vectorised_turn_statistics_equal_the_per_turn_ones(corpus: CorpusData) -> None:
    data = json.loads(gzip.decompress((FIXTURES / "soloist.json.gz").read_bytes()))
    normalize = ResponseNormalizer()
    pairs = [
        (normalize(turn["response"]), corpus.references[dialogue][i])
        for dialogue, turns in list(data.items())[:200]
        for i, turn in enumerate(turns)
    ]
    rng = random.Random(3)
    words = ["a", "b", "c", "the", "NAME", "."]
    for _ in range(2000):
        hyp, ref = (" ".join(rng.choices(words, k=rng.randint(0, 12))) for _ in range(2))
        pairs.append((hyp, ref))
    pairs += [("", ""), ("a", ""), ("", "a a")]
    hyps = [tokenize_13a(h.rstrip()).split() for h, _ in pairs]
    refs = [tokenize_13a(r.rstrip()).split() for _, r in pairs]
    stats = BleuStatistics()
    expected = [list(stats.turn(h, r)) for h, r in pairs]
    assert turn_statistics(hyps, refs).tolist() == expected
    assert turn_statistics([], []).shape == (0, 10)


def test_vectorised_turn_statistics_with_a_huge_vocabulary() -> None:
    hyps = [[f"w{i}" for i in range(40000)] + ["x", "y"], ["x", "y", "x"]]
    refs = [["x", "y", "w5", "w6", "w7", "w8"], ["x", "x", "y"]]
    assert turn_statistics(hyps, refs).tolist() == [
        [40002, 6, 6, 4, 2, 1, 40002, 40001, 40000, 39999],
        [3, 3, 3, 1, 0, 0, 3, 2, 1, 0],
    ]


def test_turn_statistics_clip_repeated_ngrams() -> None:
    stats = BleuStatistics().turn("the the the cat", "the cat")
    assert stats == (4, 2, 2, 1, 0, 0, 4, 3, 2, 1)


@pytest.mark.parametrize(
    "stats",
    [
        (10, 12, 8, 5, 3, 1, 10, 9, 8, 7),
        (10, 8, 8, 5, 3, 0, 10, 9, 8, 7),  # no 4-gram match: smoothed
        (10, 8, 8, 0, 0, 0, 10, 9, 8, 7),
        (0, 5, 0, 0, 0, 0, 0, 0, 0, 0),  # empty hypothesis
        (3, 3, 2, 1, 0, 0, 3, 2, 1, 0),  # no 4-grams at all
        (2, 9, 2, 1, 0, 0, 2, 1, 0, 0),
    ],
)
def test_vectorised_bleu_equals_sacrebleu_formula(stats: tuple[int, ...]) -> None:
    many = corpus_bleu_many(np.array([stats, stats]))
    assert many[0] == pytest.approx(corpus_bleu(stats), abs=1e-9)


def test_vectorised_bleu_on_random_statistics() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(500):
        hyp_len = int(rng.integers(0, 40))
        totals = [max(hyp_len - n, 0) for n in range(4)]
        correct = [int(rng.integers(0, t + 1)) for t in totals]
        rows.append((hyp_len, int(rng.integers(0, 40)), *correct, *totals))
    many = corpus_bleu_many(np.array(rows))
    assert many == pytest.approx([corpus_bleu(r) for r in rows], abs=1e-9)


def test_richness_tokenizer_follows_lexical_diversity_rules() -> None:
    assert tokenize("NAME is at ADDRESS.") == ["name", "is", "at", "address"]
    assert tokenize("what? ok.") == ["what", "ok"]
    assert tokenize("hello .") == ["hello", ""]  # a trailing space leaves an empty token
    assert tokenize("``quoted``") == ["quoted"]
    assert tokenize("S_YM x") == ["", "x"]  # '_' goes first, then SYM
    assert tokenize("SY:M") == ["sym"]  # ':' goes after SYM was removed


def test_richness_statistics() -> None:
    scores = richness([["a", "b", "a"], ["a", "c"]])
    assert scores.avg_length == 2.5
    assert scores.unique_words == 3
    assert scores.unique_bigrams == 3
    assert scores.unique_trigrams == 1
    # p(a)=3/5, bigrams (a,b) (b,a) (a,c): H = -sum p(h,w) log2 p(w|h)
    assert scores.cond_entropy == pytest.approx(-(1 / 5) * np.log2(1 / 3) * 2)
