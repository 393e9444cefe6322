"""Text-free labellers: what the candidate lists and the turn structure give without a word.

A labeller that never reads an utterance still sees each turn's candidate list, its position
in the dialogue (the turn's index, the speaker, how many of the speaker's turns it was asked
before) and the lists of the earlier turns. Candidate lists are drawn from a secret per-run key
in the label set's order (:func:`~.data.candidates`), so what a list can say of the gold is
what *any* gold-free list conditioned on holding the gold says: P(G | list) ∝ P(G) /
inclusion(G) over the gold sets G the list holds (the in-list prior; with the default ``k`` on
craigslist and casino the list is every label and says nothing).

* ``prior`` (a declared baseline, privileged: fitted on the training turns' gold like
  ``majority``): ranks the candidates by their training frequency at the turn's depth and
  speaker, divided by the label's inclusion probability, and answers the top one plus every
  candidate whose score reaches a ratio of the top's, or the top 1, 2 or 3 -- whichever rule
  scores best on the training turns. With every
  label in the list it is the structural prior; with ``--k`` below the label count it is the
  in-list prior. The floors of ``todeval validate bargain`` are the best of it and ``majority``.
* ``text-blind`` (the adversary family of ``todeval validate bargain``, privileged the same
  way): a classifier fitted on the training turns with features of the lists and the turn
  structure only, cross-fitted over dialogues as the other baselines; or the inverse-shuffle
  attacker, which reconstructs the list generation from public values. Parameters
  (``text-blind?learner=boosting&features=all&emit=2``): ``learner`` (``prior``, ``logistic``,
  ``boosting``, ``inverse-shuffle``), ``features`` (``position``, ``structure``, ``all``),
  ``emit`` (1, 2, 3 or ``auto``), and the run's public list settings ``k``, ``distractors``,
  ``seed`` (the candidate seed) with which it draws its own training lists under a key of its
  own (it cannot know the run's).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from todeval.benchmarks.bargain.baselines import Fitted
from todeval.benchmarks.bargain.data import (
    DEFAULT_K,
    Dialogue,
    Track,
    candidates,
    hard_quota,
    labels_of,
    list_inclusion,
    parent_groups,
)
from todeval.benchmarks.bargain.labellers import LabellerContext, LabelOutput, TurnView
from todeval.dialogue import PlayerOptions
from todeval.errors import UsageError

LEARNERS = ("inverse-shuffle", "prior", "logistic", "boosting")
FEATURES = ("position", "structure", "all")
EMITS = ("1", "2", "3", "auto")
RATIOS = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
SPEAKERS = ("Buyer", "Seller", "Camper 1", "Camper 2")


@dataclass(frozen=True)
class Shape:
    """What a text-blind labeller reads of a turn: never a word of the dialogue."""

    dialogue_id: str
    index: int  # the utterance's index in the dialogue
    number: int  # 1 for the first turn it is asked about in the dialogue, then 2, ...
    depth: int  # the speaker's own labelled turns so far, this one included
    speaker: str
    candidates: tuple[str, ...]
    previous: tuple[tuple[str, ...], ...] = ()  # the earlier turns' lists, in order

    @property
    def bucket(self) -> str:
        return str(self.depth) if self.depth < 4 else "4+"


@dataclass(frozen=True)
class ListSettings:
    """The run's public list settings (its config): what a labeller may know of the lists."""

    track: Track
    k: int = DEFAULT_K
    distractors: str = "uniform"
    seed: int = 0

    def groups(self) -> dict[str, str] | None:
        return parent_groups(self.track) if self.distractors == "hard" else None


def training_shapes(
    dialogues: Sequence[Dialogue], settings: ListSettings, key: bytes
) -> list[tuple[Shape, tuple[str, ...]]]:
    """The training turns as a text-blind labeller sees them, with lists drawn under ``key``
    (the labeller's own), and their gold."""
    labels = list(labels_of(settings.track))
    groups = settings.groups()
    out = []
    for d in dialogues:
        previous: list[tuple[str, ...]] = []
        for number, turn in enumerate(d.turns, 1):
            cands = tuple(
                candidates(d.dialogue_id, turn, labels, settings.k, settings.seed, key, groups)
            )
            shape = Shape(
                d.dialogue_id, turn.index, number, turn.depth, turn.speaker, cands, tuple(previous)
            )
            out.append((shape, tuple(turn.gold)))
            previous.append(cands)
    return out


def _f1(tp: int, pred: int, gold: int) -> float:
    p, r = tp / max(pred, 1), tp / max(gold, 1)
    return 2 * p * r / (p + r) if p + r else 0.0


def _by_ratio(ranked: Sequence[tuple[str, float]], ratio: float) -> list[str]:
    if not ranked:
        return []
    top = ranked[0][1]
    return [label for label, s in ranked if s >= ratio * top]


Rule = tuple[str, float]
"""How many candidates to answer: ("ratio", r) -- every one scoring at least r x the top's --
or ("top", n) -- the n best."""


def emit(ranked: Sequence[tuple[str, float]], rule: Rule) -> list[str]:
    kind, value = rule
    if kind == "top":
        return [label for label, _ in ranked[: int(value)]]
    return _by_ratio(ranked, value)


def tune_ratio(ranked: Sequence[tuple[Sequence[tuple[str, float]], set[str]]]) -> float:
    """The ratio (answer every label scoring at least ratio x the top's) best on training."""
    return tune_rule(ranked, tops=False)[1]


def tune_rule(
    ranked: Sequence[tuple[Sequence[tuple[str, float]], set[str]]], tops: bool = True
) -> Rule:
    """The emission rule best on the training turns: a ratio of the top's score or, with
    ``tops``, a fixed number of candidates (1, 2, 3)."""
    rules: list[Rule] = [("ratio", r) for r in RATIOS]
    if tops:
        rules += [("top", float(n)) for n in (1, 2, 3)]
    best: Rule = rules[0]
    best_f1 = -1.0
    for rule in rules:
        tp = pred = gold = 0
        for scores, gold_set in ranked:
            guess = set(emit(scores, rule))
            tp += len(guess & gold_set)
            pred += len(guess)
            gold += len(gold_set)
        f1 = _f1(tp, pred, gold)
        if f1 > best_f1 + 1e-12:
            best, best_f1 = rule, f1
    return best


class PriorModel:
    """P(label | depth, speaker) from the training turns (backing off to P(label)), divided
    by the label's inclusion probability in a gold-free list: the in-list posterior of each
    candidate, up to a constant."""

    def __init__(
        self,
        train: Sequence[tuple[Shape, tuple[str, ...]]],
        labels: Sequence[str],
        settings: ListSettings,
    ) -> None:
        self.labels = list(labels)
        self.order = {label: i for i, label in enumerate(self.labels)}
        self.total = Counter[str]()
        self.by: dict[tuple[str, str], Counter[str]] = {}
        self.turns: Counter[tuple[str, str]] = Counter()
        for shape, gold in train:
            key = (shape.bucket, shape.speaker)
            self.by.setdefault(key, Counter()).update(gold)
            self.turns[key] += 1
            self.total.update(gold)
        n = sum(self.total.values()) or 1
        self.base = {y: (self.total[y] + 0.5) / (n + 0.5 * len(self.labels)) for y in self.labels}
        groups = settings.groups()
        self.weight = {
            y: 1.0 / max(list_inclusion([y], self.labels, settings.k, groups), 1e-12)
            for y in self.labels
        }
        self.rule = tune_rule([(self.rank(s), set(g)) for s, g in train])

    def rank(self, shape: Shape) -> list[tuple[str, float]]:
        key = (shape.bucket, shape.speaker)
        counts = self.by.get(key, Counter())
        n = self.turns.get(key, 0)
        alpha = 2.0
        scores = []
        for y in shape.candidates:
            if y not in self.base:
                continue
            p = (counts[y] + alpha * self.base[y]) / (n + alpha)
            scores.append((y, p * self.weight[y]))
        return sorted(scores, key=lambda x: (-x[1], self.order[x[0]]))

    def predict(self, shape: Shape) -> list[str]:
        return emit(self.rank(shape), self.rule)


# -- the learner's features ------------------------------------------------------------------


def features(
    shape: Shape, kind: str, labels: Mapping[str, int], prior: PriorModel
) -> list[list[float]]:
    """The features of each candidate of a turn, in list order (never a word): ``position`` --
    its place in the list, the list's length, the label's identity and rank in the label set;
    ``structure`` adds the turn's index, number, depth, speaker, the label's prior at that
    depth and its inclusion weight; ``all`` adds the earlier turns' lists (was the label in the
    previous list, in how many earlier lists, the previous list's length)."""
    n_labels = len(labels)
    size = len(shape.candidates)
    speaker = SPEAKERS.index(shape.speaker) if shape.speaker in SPEAKERS else -1
    ranked = dict(prior.rank(shape)) if kind != "position" else {}
    top = max(ranked.values()) if ranked else 1.0
    prev = shape.previous
    last = set(prev[-1]) if prev else set()
    seen = Counter(label for p in prev for label in set(p))
    rows = []
    for pos, label in enumerate(shape.candidates):
        rank = labels[label]
        one_hot = [0.0] * n_labels
        one_hot[rank] = 1.0
        row = [pos, pos / max(size - 1, 1), size, rank, rank / max(n_labels - 1, 1), *one_hot]
        if kind in ("structure", "all"):
            row += [
                shape.index,
                shape.number,
                shape.depth,
                speaker,
                ranked.get(label, 0.0) / top,
                math.log(prior.weight[label]),
            ]
        if kind == "all":
            row += [
                float(label in last),
                seen[label],
                seen[label] / max(len(prev), 1),
                len(last),
                len(prev),
            ]
        rows.append([float(x) for x in row])
    return rows


_ONE_THREAD: Any = None


class Learner:
    """A classifier over (turn, candidate) rows: is this candidate a gold label?"""

    def __init__(
        self,
        kind: str,
        feature_kind: str,
        train: Sequence[tuple[Shape, tuple[str, ...]]],
        labels: Sequence[str],
        prior: PriorModel,
    ) -> None:
        try:
            import numpy as np
            from sklearn.ensemble import HistGradientBoostingClassifier  # type: ignore[import-untyped]
            from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
        except ImportError:
            raise UsageError(
                "the text-blind learner needs scikit-learn: pip install 'todeval[validate]'"
            ) from None
        self.np = np
        global _ONE_THREAD
        if _ONE_THREAD is None:  # one OpenMP thread for the process: many small predictions
            _ONE_THREAD = threadpool_limits(limits=1, user_api="openmp")
        self.kind, self.feature_kind = kind, feature_kind
        self.labels, self.prior = list(labels), prior
        self.index = {label: i for i, label in enumerate(labels)}
        rows: list[list[float]] = []
        target = []
        for shape, gold in train:
            if any(c not in self.index for c in shape.candidates):
                continue
            rows += features(shape, feature_kind, self.index, prior)
            target += [int(label in gold) for label in shape.candidates]
        x, y = self._matrix(rows), np.asarray(target)
        if kind == "boosting":  # the label's rank is a categorical feature (no one-hot)
            self.model: Any = HistGradientBoostingClassifier(
                max_iter=100,
                learning_rate=0.1,
                max_leaf_nodes=15,
                categorical_features=[3],
                random_state=0,
            )
        else:
            self.mean = x.mean(axis=0)
            self.std = x.std(axis=0) + 1e-9
            x = (x - self.mean) / self.std
            self.model = LogisticRegression(max_iter=500, C=1.0)
        if len(set(target)) < 2:
            raise UsageError("the text-blind learner needs training turns with gold labels")
        self.model.fit(x, y)

    def _matrix(self, rows: list[list[float]]) -> Any:
        x = self.np.asarray(rows)
        if self.kind == "boosting":  # drop the one-hot columns (5 .. 5 + labels)
            x = self.np.delete(x, self.np.s_[5 : 5 + len(self.index)], axis=1)
        return x

    def rank_many(self, shapes: Sequence[Shape]) -> list[list[tuple[str, float]]]:
        """:meth:`rank` of many turns in one call."""
        rows: list[list[float]] = []
        spans = []
        for shape in shapes:
            ok = all(c in self.index for c in shape.candidates)
            start = len(rows)
            if ok:
                rows += features(shape, self.feature_kind, self.index, self.prior)
            spans.append((start, len(rows)))
        if not rows:
            return [[] for _ in shapes]
        x = self._matrix(rows)
        if self.kind != "boosting":
            x = (x - self.mean) / self.std
        p = self.model.predict_proba(x)[:, 1]
        out = []
        for shape, (a, b) in zip(shapes, spans, strict=True):
            pairs = zip(shape.candidates, (float(v) for v in p[a:b]), strict=False)
            out.append(sorted(pairs, key=lambda t: -t[1]) if b > a else [])
        return out

    def rank(self, shape: Shape) -> list[tuple[str, float]]:
        return self.rank_many([shape])[0]


# -- the inverse-shuffle attacker ------------------------------------------------------------


def _public_rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def v1_candidates(
    dialogue_id: str, index: int, gold: Sequence[str], labels: Sequence[str], k: int, seed: int
) -> list[str]:
    """The list generation before issue 41, from public values only (candidate seed, dialogue,
    turn): the gold, uniform distractors, then a shuffle. The attacker's model of it."""
    size = max(min(k, len(labels)), len(gold))
    rng = _public_rng("bargain-candidates", seed, dialogue_id, index)
    others = [label for label in labels if label not in gold]
    chosen = list(gold) + rng.sample(others, size - len(gold))
    rng.shuffle(chosen)
    return chosen


CHANCE = 100
"""The attack accepts a reconstruction only when the distractor draw it replays had at least
this many outcomes (a full list's last few entries match by chance)."""


def invert_shuffle(
    dialogue_id: str,
    index: int,
    observed: Sequence[str],
    labels: Sequence[str],
    seed: int,
    most: int = 5,
) -> list[str] | None:
    """The inverse-shuffle attack: replay the public generator for each gold size g (the draws
    of ``sample`` and ``shuffle`` depend only on the lengths), undo the shuffle, and take the
    first g entries as the gold when the rest is what ``sample`` would have drawn. ``None``
    when no g up to ``most`` (the largest gold set of the training turns) reproduces the list
    (the list was not drawn from public values)."""
    size = len(observed)
    for g in range(1, min(size, most + 1)):
        if math.perm(len(labels) - g, size - g) < CHANCE:
            continue  # the sample step could match by chance: it proves nothing
        rng = _public_rng("bargain-candidates", seed, dialogue_id, index)
        picks = rng.sample(range(len(labels) - g), size - g)
        perm = list(range(size))
        rng.shuffle(perm)  # shuffled[i] = chosen[perm[i]]
        chosen: list[str] = [""] * size
        for i, p in enumerate(perm):
            chosen[p] = observed[i]
        gold = chosen[:g]
        others = [label for label in labels if label not in gold]
        if len(set(gold)) == g and [others[j] for j in picks] == chosen[g:]:
            return gold
    return None


# -- the labellers ---------------------------------------------------------------------------

_MODELS: dict[tuple[Any, ...], tuple[Fitted, Any]] = {}
"""Fitted models by (the fold's Fitted object, settings): a labeller is built per dialogue,
its model once per fold and run."""


def train_key(seed: int) -> bytes:
    """The key a text-blind labeller draws its training lists with: its own, never the run's."""
    return hashlib.sha256(f"bargain-text-blind-training|{seed}".encode()).digest()


def _cached(fitted: Fitted, what: tuple[Any, ...], build: Any) -> Any:
    key = (id(fitted), *what)
    found = _MODELS.get(key)
    if found is None or found[0] is not fitted:
        if len(_MODELS) > 64:
            _MODELS.clear()
        found = (fitted, build())
        _MODELS[key] = found
    return found[1]


def _infer_settings(track: Track, cands: Sequence[str], params: Mapping[str, str]) -> ListSettings:
    labels = list(labels_of(track))
    distractors = params.get("distractors")
    if distractors is None:  # read the list's shape: every parent at its hard quota
        distractors = "uniform"
        if track == "scripted":
            groups = parent_groups(track)
            quota = hard_quota(labels, groups, len(cands))
            counts = Counter(groups[c] for c in cands if c in groups)
            if len(cands) == sum(quota.values()) and counts == Counter(quota):
                distractors = "hard"
    try:
        k = int(params.get("k", len(cands)))
        seed = int(params.get("seed", 0))
    except ValueError:
        raise UsageError("text-blind: k and seed are integers") from None
    if distractors not in ("uniform", "hard"):
        raise UsageError(f"text-blind: distractors is uniform or hard, not {distractors!r}")
    return ListSettings(track, k, distractors, seed)


class _TextFree:
    """Counts the turns it is asked about (number, depth) and keeps the earlier lists: all it
    reads of a turn is :class:`Shape` -- never ``observation.dialogue``'s text."""

    privileged = True  # fitted on the training turns' gold (cross-fitted), like majority

    def __init__(self, options: PlayerOptions) -> None:
        self.params = dict(options.params)  # never options.privileged: no answer key here

    @classmethod
    def from_options(cls, options: PlayerOptions) -> _TextFree:
        return cls(options)

    async def start(self, context: LabellerContext) -> None:
        self.context = context
        self.previous: list[tuple[str, ...]] = []
        self.depths: Counter[str] = Counter()
        self.settings: ListSettings | None = None

    def shape(self, observation: TurnView) -> Shape:
        self.depths[observation.speaker] += 1
        shape = Shape(
            self.context.dialogue_id,
            observation.index,
            len(self.previous) + 1,
            self.depths[observation.speaker],
            observation.speaker,
            tuple(observation.candidates),
            tuple(self.previous),
        )
        self.previous.append(tuple(observation.candidates))
        if self.settings is None:
            self.settings = _infer_settings(self.context.track, observation.candidates, self.params)
        return shape

    def prior(self, settings: ListSettings) -> PriorModel:
        fitted = self.context.fitted
        labels = list(labels_of(settings.track))

        def build() -> PriorModel:
            train = training_shapes(fitted.dialogues, settings, train_key(settings.seed))
            return PriorModel(train, labels, settings)

        return _cached(fitted, ("prior", settings), build)  # type: ignore[no-any-return]


class PriorLabeller(_TextFree):
    """The declared text-free baseline: the in-list prior at the turn's depth and speaker."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        shape = self.shape(observation)
        assert self.settings is not None
        ids = self.prior(self.settings).predict(shape)
        return LabelOutput(ids=ids, raw=str(ids))


class TextBlindLabeller(_TextFree):
    """The adversary family's agent: a learner over list and structure features, or the
    inverse-shuffle attacker (falling back to the prior when the list cannot be inverted)."""

    def __init__(self, options: PlayerOptions) -> None:
        super().__init__(options)
        self.learner = self.params.get("learner", "boosting")
        self.feature_kind = self.params.get("features", "all")
        self.emit = self.params.get("emit", "auto")
        for name, value, allowed in (
            ("learner", self.learner, LEARNERS),
            ("features", self.feature_kind, FEATURES),
            ("emit", self.emit, EMITS),
        ):
            if value not in allowed:
                raise UsageError(f"text-blind: {name} {value!r} is not one of {', '.join(allowed)}")

    def _emit(self, ranked: Sequence[tuple[str, float]], auto: Rule) -> list[str]:
        if self.emit == "auto":
            return emit(ranked, auto)
        return [label for label, _ in ranked[: int(self.emit)]]

    def model(self, settings: ListSettings) -> tuple[Any, Rule]:
        prior = self.prior(settings)
        if self.learner in ("prior", "inverse-shuffle"):
            return prior, prior.rule
        fitted = self.context.fitted
        labels = list(labels_of(settings.track))

        def build() -> tuple[Learner, Rule]:
            train = training_shapes(fitted.dialogues, settings, train_key(settings.seed))
            learner = Learner(self.learner, self.feature_kind, train, labels, prior)
            ranked = learner.rank_many([s for s, _ in train])
            rule = tune_rule([(r, set(g)) for r, (_, g) in zip(ranked, train, strict=True)])
            return learner, rule

        found: tuple[Any, Rule] = _cached(
            fitted, (self.learner, self.feature_kind, settings), build
        )
        return found

    async def respond(self, observation: TurnView) -> LabelOutput:
        shape = self.shape(observation)
        assert self.settings is not None
        if self.learner == "inverse-shuffle":
            labels = list(labels_of(self.settings.track))
            most = max(m for m, _ in self.context.fitted.label_counts)
            found = invert_shuffle(
                shape.dialogue_id, shape.index, shape.candidates, labels, self.settings.seed, most
            )
            if found is not None:
                return LabelOutput(ids=found, raw=str(found))
        model, rule = self.model(self.settings)
        ids = self._emit(model.rank(shape), rule)
        return LabelOutput(ids=ids, raw=str(ids))


__all__ = [
    "FEATURES",
    "LEARNERS",
    "Learner",
    "ListSettings",
    "PriorLabeller",
    "PriorModel",
    "Shape",
    "TextBlindLabeller",
    "invert_shuffle",
    "training_shapes",
    "v1_candidates",
]
