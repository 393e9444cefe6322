"""Lexical matching for the ``rule`` provider: tokens, light stemming and BM25.

English text becomes lower-cased word tokens without a small stop-word list, lightly stemmed
(plural ``s``/``es``/``ies``, ``ing``, ``ed``), so "mines" meets "mine" and "stunning" meets
"stun". Chinese text becomes character bigrams of every run of CJK ideographs (a one-character
run is kept as a unigram), with ASCII words tokenised as in English. Document frequencies come
from every response node of the language (text and purpose, test and dev tasks: about 1,400
documents), so a word every task uses ("Jax", "response") weighs little and a task's own
names weigh much.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from todeval.benchmarks.clarq._text import Language

_WORD = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile("[\u4e00-\u9fff]+")
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+")

STOP_WORDS_EN = frozenset(
    (
        "a", "about", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
        "as", "at", "be", "because", "been", "before", "being", "between", "both", "but", "by",
        "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
        "from", "further", "get", "got", "had", "has", "have", "having", "he", "her", "here",
        "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it",
        "its", "itself", "just", "me", "might", "more", "most", "must", "my", "myself", "no",
        "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
        "ourselves", "out", "over", "own", "please", "same", "shall", "she", "should", "so",
        "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
        "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
        "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
        "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t",
        "d", "ll", "m", "re", "ve", "jax", "ok", "okay", "yes", "hi", "hello", "thanks", "thank",
        "tell", "know", "need", "let", "like", "want", "go", "going", "able", "think", "really",
        "much", "many", "still", "ever", "even", "well", "good", "great", "last", "next", "first",
        "best", "usually"
    )
)  # fmt: skip
"""Function words and the dialogue's own small talk; they say nothing about which node."""

STOP_CHARS_ZH = frozenset(
    "的了吗呢吧啊呀么和与及或是在我你他她它们这那有就都也还要会能可以把被对给"
)
"""Characters that alone make no bigram worth keeping (a bigram of two of them is dropped)."""


def stem(word: str) -> str:
    """A light English stemmer: plurals, ``-ing``, ``-ed``, a final ``e`` (enough to meet
    inflected forms: "trade", "trading" and "traded" are all ``trad``)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # stunn(ing) -> stun, planned -> plan
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]  # trade, trading, traded -> trad
    return word


def tokens_en(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS_EN]


def tokens_zh(text: str) -> list[str]:
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            if run not in STOP_CHARS_ZH:
                out.append(run)
            continue
        for i in range(len(run) - 1):
            gram = run[i : i + 2]
            if gram[0] in STOP_CHARS_ZH and gram[1] in STOP_CHARS_ZH:
                continue
            out.append(gram)
    out.extend(tokens_en(" ".join(_ASCII_WORDS.findall(text))))
    return out


def tokenize(text: str, lang: Language) -> list[str]:
    """The tokens of ``text`` (English words or Chinese character bigrams, see the module)."""
    return list(_tokens(text, lang))


@lru_cache(maxsize=1 << 16)
def _tokens(text: str, lang: Language) -> tuple[str, ...]:
    """:func:`tokenize`, memoised: a provider re-reads the same background entries, node texts
    and earlier turns at every decision (a pure function of its arguments)."""
    return tuple(tokens_en(text) if lang == "en" else tokens_zh(text))


@dataclass(frozen=True)
class Corpus:
    """Document frequencies of one language's node documents (the BM25 IDF)."""

    n_docs: int
    df: dict[str, int]
    avg_len: float

    @classmethod
    def build(cls, docs: Iterable[Sequence[str]]) -> Corpus:
        df: Counter[str] = Counter()
        n = 0
        total = 0
        for doc in docs:
            n += 1
            total += len(doc)
            df.update(set(doc))
        return cls(n_docs=n, df=dict(df), avg_len=total / n if n else 1.0)

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))


K1 = 1.2
B = 0.75


def bm25(
    query: Sequence[str],
    doc: Sequence[str],
    corpus: Corpus,
    weights: Mapping[str, float] | None = None,
) -> float:
    """Okapi BM25 of ``doc`` for ``query`` (each distinct query term counted once; a term's
    IDF is multiplied by ``weights[term]`` when given, default 1)."""
    if not doc:
        return 0.0
    counts = Counter(doc)
    norm = K1 * (1.0 - B + B * len(doc) / corpus.avg_len)
    score = 0.0
    for term in set(query):
        tf = counts.get(term, 0)
        if tf:
            weight = 1.0 if weights is None else weights.get(term, 1.0)
            score += weight * corpus.idf(term) * tf * (K1 + 1.0) / (tf + norm)
    return score


def coverage(query: Sequence[str], doc: Sequence[str], corpus: Corpus) -> float:
    """The IDF mass of ``doc``'s distinct terms that ``query`` contains (0..1)."""
    terms = set(doc)
    total = sum(corpus.idf(t) for t in terms)
    if not total:
        return 0.0
    asked = set(query)
    return sum(corpus.idf(t) for t in terms if t in asked) / total


@cache
def language_corpus(lang: Language) -> Corpus:
    """Document frequencies over every node (text + purpose) of the shipped tasks of ``lang``
    (read once per process; the task files never change)."""
    from todeval.benchmarks.clarq._tasks import read_tasks

    docs = []
    for task in read_tasks(lang).tasks:
        for node in task.nodes:
            docs.append(tokenize(node.text, lang))
            if node.purpose:
                docs.append(tokenize(node.purpose, lang))
    return Corpus.build(docs)
