"""Few-shot examples for ``hd-pipeline``: MultiWOZ validation turns retrieved with BM25.

Hudeček & Dušek (2023) retrieve their few-shot examples by embedding similarity (FAISS over
sentence embeddings). No embedding model is available offline, so todeval retrieves by lexical
similarity instead: Okapi BM25 (``k1 = 1.5``, ``b = 0.75``) over the user turns of the shipped
MultiWOZ validation dialogues (``booking_tasks/dev.json``). This is a documented deviation.

An :class:`Example` is one user turn with the domain its dialogue acts name, the domain's slot
values stated so far in that dialogue (MultiWOZ ``book*`` act slots map to the tools' ``people``,
``day``, ``time``, ``stay``) and the wizard's reply that followed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from todeval.benchmarks.booking.tasks import BOOKING_DOMAINS, load_tasks

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "i'm",
        "im",
        "to",
        "for",
        "of",
        "and",
        "or",
        "in",
        "on",
        "at",
        "is",
        "it",
        "be",
        "me",
        "my",
        "we",
        "you",
        "please",
        "would",
        "like",
        "can",
        "could",
        "need",
        "want",
        "looking",
        "find",
    ]
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without a few function words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


class BM25:
    """Okapi BM25 over a fixed list of documents (token lists)."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.counts = [Counter(d) for d in documents]
        self.lengths = [len(d) for d in documents]
        self.average = sum(self.lengths) / len(documents) if documents else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(documents)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def scores(self, query: list[str]) -> list[float]:
        """The BM25 score of every document for ``query``."""
        out: list[float] = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / (self.average or 1.0))
            score = 0.0
            for term in query:
                tf = counts.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            out.append(score)
        return out

    def top(self, query: list[str], k: int, allowed: list[bool] | None = None) -> list[int]:
        """Indices of the ``k`` best-scoring documents (score > 0; ties by index)."""
        scored = [
            (s, i)
            for i, s in enumerate(self.scores(query))
            if s > 0 and (allowed is None or allowed[i])
        ]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [i for _, i in scored[:k]]


@dataclass(frozen=True)
class Example:
    """One validation user turn: its domain, the domain's state after it, the reply to it."""

    dialogue: str
    user: str
    domain: str
    state: dict[str, str]
    reply: str


_BOOK_SLOTS = {"bookpeople": "people", "bookday": "day", "booktime": "time", "bookstay": "stay"}


def validation_examples() -> list[Example]:
    """Every user turn of the validation dialogues whose acts name a booking domain."""
    out: list[Example] = []
    for task in load_tasks("dev"):
        turns = task.corpus_turns
        states: dict[str, dict[str, str]] = {d: {} for d in BOOKING_DOMAINS}
        for index, turn in enumerate(turns):
            if turn.speaker != "user":
                continue
            domains: list[str] = []
            for act, pairs in turn.dialog_act.items():
                domain = act.split("-")[0].lower()
                if domain not in BOOKING_DOMAINS:
                    continue
                if domain not in domains:
                    domains.append(domain)
                if act.endswith("-Inform"):
                    for slot, value in pairs:
                        key = _BOOK_SLOTS.get(slot, slot)
                        if key != "none" and value not in ("none", "?"):
                            states[domain][key] = value
            if not domains:
                continue
            reply = turns[index + 1].text if index + 1 < len(turns) else ""
            domain = domains[0]
            out.append(Example(task.filename, turn.text, domain, dict(states[domain]), reply))
    return out


class ExampleRetriever:
    """BM25 over the validation user turns; the best examples for a user message."""

    def __init__(self, examples: list[Example]) -> None:
        self.examples = examples
        self.index = BM25([tokens(e.user) for e in examples])

    def retrieve(self, text: str, k: int, domain: str | None = None) -> list[Example]:
        """The ``k`` examples most similar to ``text`` (of ``domain`` when one is given)."""
        if k <= 0:
            return []
        allowed = None if domain is None else [e.domain == domain for e in self.examples]
        return [self.examples[i] for i in self.index.top(tokens(text), k, allowed)]


@cache
def default_retriever() -> ExampleRetriever:
    """The retriever over the shipped validation dialogues (built once per process)."""
    return ExampleRetriever(validation_examples())
