"""What the baseline labellers learn from training dialogues, and the random baseline's
analytic expectation.

Training data: CaSiNo's annotated train split (347 dialogues) for the casino track's test
split. The craigslist track has act labels for its test dialogues only, so its baselines are
**cross-fitted**: the dialogues are split into 5 folds by a hash of their id, and a dialogue's
baselines are fitted on the other four folds (never on the dialogue itself). Casino's
``--split all`` (which includes the train split) is cross-fitted the same way.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from todeval.benchmarks.bargain.data import Dialogue, Track, casino_dialogues, labels_of

FOLDS = 5
_TOKEN = re.compile(r"\$?\d[\d,.]*k?|[a-z']+|[?!]")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; numbers become ``<num>`` (``<price>`` with a dollar sign)."""
    out = []
    for tok in _TOKEN.findall(text.lower()):
        if tok[0] == "$":
            out.append("<price>")
        elif tok[0].isdigit():
            out.append("<num>")
        else:
            out.append(tok)
    return out


def fold_of(dialogue_id: str) -> int:
    return int(hashlib.sha256(dialogue_id.encode()).hexdigest()[:8], 16) % FOLDS


@dataclass(frozen=True)
class KeywordModel:
    """One-vs-rest multinomial naive Bayes over word tokens (add-one smoothing); a turn gets
    its top label plus every label whose posterior reaches ``ratio`` x the top's."""

    labels: tuple[str, ...]
    log_prior: tuple[float, ...]
    log_lik: tuple[dict[str, float], ...]
    unseen: tuple[float, ...]
    ratio: float

    def posteriors(self, text: str, allowed: Sequence[str]) -> list[tuple[str, float]]:
        toks = tokens(text)
        scores = []
        for i, label in enumerate(self.labels):
            if label not in allowed:
                continue
            s = self.log_prior[i] + sum(self.log_lik[i].get(t, self.unseen[i]) for t in toks)
            scores.append((label, s))
        if not scores:
            return []
        top = max(s for _, s in scores)
        weights = [(label, math.exp(s - top)) for label, s in scores]
        total = sum(w for _, w in weights)
        return sorted(((label, w / total) for label, w in weights), key=lambda x: -x[1])

    def predict(self, text: str, allowed: Sequence[str]) -> list[str]:
        ranked = self.posteriors(text, allowed)
        if not ranked:
            return []
        top = ranked[0][1]
        return [label for label, p in ranked if p >= self.ratio * top]


def _fit_keyword(
    examples: Sequence[tuple[str, tuple[str, ...]]], labels: Sequence[str]
) -> KeywordModel:
    vocab: set[str] = set()
    counts = [Counter[str]() for _ in labels]
    docs = Counter[str]()
    for text, gold in examples:
        toks = tokens(text)
        vocab.update(toks)
        for label in gold:
            i = labels.index(label)
            counts[i].update(toks)
            docs[label] += 1
    n = sum(docs.values())
    log_prior, log_lik, unseen = [], [], []
    for i, label in enumerate(labels):
        log_prior.append(math.log((docs[label] + 1) / (n + len(labels))))
        total = sum(counts[i].values()) + len(vocab) + 1
        log_lik.append({w: math.log((c + 1) / total) for w, c in counts[i].items()})
        unseen.append(math.log(1 / total))
    model = KeywordModel(tuple(labels), tuple(log_prior), tuple(log_lik), tuple(unseen), 1.0)
    # the posteriors do not depend on the ratio: compute them once, then try each ratio
    ranked = [(model.posteriors(text, labels), set(gold)) for text, gold in examples]
    best, best_f1 = 1.0, -1.0
    for ratio in (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1):  # tuned on the training turns
        tp = pred = gold_n = 0
        for posts, gold_set in ranked:
            top = posts[0][1] if posts else 0.0
            guess = {label for label, p in posts if p >= ratio * top}
            tp += len(guess & gold_set)
            pred += len(guess)
            gold_n += len(gold_set)
        p, r = tp / max(pred, 1), tp / max(gold_n, 1)
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        if f1 > best_f1 + 1e-12:
            best, best_f1 = ratio, f1
    return KeywordModel(model.labels, model.log_prior, model.log_lik, model.unseen, best)


@dataclass(frozen=True)
class Fitted:
    """What the baselines know, fitted on training dialogues only (the keyword model on
    first use: most labellers never need it)."""

    source: str  # which dialogues were used, in words
    label_counts: tuple[tuple[int, float], ...]  # m -> share of training turns with m labels
    majority: tuple[str, ...]  # the most frequent gold label set
    examples: tuple[tuple[str, tuple[str, ...]], ...]
    labels: tuple[str, ...]
    dialogues: tuple[Dialogue, ...] = ()  # the training dialogues (text-free baselines)

    @cached_property
    def keyword(self) -> KeywordModel:
        return _fit_keyword(self.examples, list(self.labels))

    @property
    def mean_count(self) -> float:
        return sum(m * p for m, p in self.label_counts)


def fit(dialogues: Sequence[Dialogue], labels: Sequence[str], source: str) -> Fitted:
    examples = [(d.utterances[t.index].text, t.gold) for d in dialogues for t in d.turns]
    sizes = Counter(len(g) for _, g in examples)
    n = sum(sizes.values())
    sets = Counter(tuple(sorted(g)) for _, g in examples)
    majority = min(sets, key=lambda s: (-sets[s], s))
    return Fitted(
        source=source,
        label_counts=tuple((m, sizes[m] / n) for m in sorted(sizes)),
        majority=majority,
        examples=tuple(examples),
        labels=tuple(labels),
        dialogues=tuple(dialogues),
    )


class Fits:
    """The fitted baselines of a track, one per fold for craigslist (built on demand)."""

    def __init__(self, track: Track, dialogues: Sequence[Dialogue], split: str = "test") -> None:
        self.track = track
        self.dialogues = list(dialogues)
        self.cross_fitted = track in ("craigslist", "scripted") or split == "all"
        self._cache: dict[int, Fitted] = {}

    @property
    def description(self) -> str:
        if self.cross_fitted:
            return (
                f"{FOLDS}-fold cross-fitting over the run's dialogues (never the dialogue itself)"
            )
        return "casino train split"

    def for_dialogue(self, dialogue_id: str) -> Fitted:
        key = fold_of(dialogue_id) if self.cross_fitted else -1
        if key not in self._cache:
            labels = list(labels_of(self.track))
            if not self.cross_fitted:
                self._cache[key] = fit(casino_dialogues("train"), labels, "casino train split")
            else:
                train = [d for d in self.dialogues if fold_of(d.dialogue_id) != key]
                self._cache[key] = fit(train, labels, f"{self.track} folds other than {key}")
        return self._cache[key]


def random_expectation(
    turns: Sequence[tuple[int, int, Sequence[tuple[int, float]]]],
) -> tuple[float, float]:
    """Expected micro precision and recall of the random labeller over ``turns`` (gold size
    g, effective K, the label-count distribution fitted for the turn's dialogue).

    It draws m ids uniformly without replacement from the K candidates, m from the
    distribution (capped at K). Per turn E[correct] = E[m] g / K, so recall =
    Σ E[m] g/K / Σ g, and precision (a ratio of sums, its expectation to first order) =
    Σ E[m] g/K / Σ E[m].
    """
    correct = drawn = gold = 0.0
    for g, k, label_counts in turns:
        em = sum(min(m, k) * p for m, p in label_counts)
        correct += em * g / k
        drawn += em
        gold += g
    return correct / drawn, correct / gold


__all__ = ["Fits", "Fitted", "KeywordModel", "fit", "fold_of", "random_expectation", "tokens"]
