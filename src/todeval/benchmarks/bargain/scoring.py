"""Per-turn counts and the run's precision, recall and F1 with CIs over dialogues.

Per turn, with P the predicted ids (duplicates collapse) and G the gold set:

* correct = |P ∩ G|, missed = |G ∖ P|, incorrect = |P ∖ G| among candidate ids, invalid =
  predicted ids not in the candidate list;
* an unparseable output is a failure: every gold label is missed and nothing is added to
  precision's denominator.

Micro precision = Σcorrect / Σ(correct + incorrect + invalid), micro recall = Σcorrect /
Σ(correct + missed), F1 their harmonic mean (a precision with an empty denominator is 0).
Macro: per-label P/R/F1 (a label's false positives are turns predicting it without gold),
averaged over the labels that occur in the gold of the scored turns. The CIs resample
**dialogues** (turns within a dialogue are correlated): every statistic is recomputed from the
resampled dialogues' summed counts. The failure rate also gets a Wilson interval (which treats
turns as independent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from todeval.core.records import Estimate, MetricSummary
from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, interval, seeded_rng
from todeval.stats.proportions import wilson_interval


class TurnScore(BaseModel):
    """One labelled turn's result, as recorded in the episode's ``details.turns``."""

    index: int = Field(description="position of the utterance in the dialogue")
    speaker: str
    depth: int
    k: int = Field(description="the effective candidate-list size")
    candidates: list[str]
    gold: list[str]
    predicted: list[str] | None = Field(description="the ids read from the output; None: failure")
    correct: int
    missed: int
    incorrect: int
    invalid: int
    failed: bool
    raw: str = ""
    error: str | None = None
    agreed: bool | None = Field(
        None, description="scripted llm-mode sets: the blind verifier agreed with the gold"
    )


def score_turn(
    index: int,
    speaker: str,
    depth: int,
    candidates: Sequence[str],
    gold: Sequence[str],
    predicted: Sequence[str] | None,
    *,
    raw: str = "",
    error: str | None = None,
) -> TurnScore:
    """The counts of one turn (``predicted`` None: the output could not be read)."""
    gold_set = set(gold)
    if predicted is None:
        return TurnScore(
            index=index,
            speaker=speaker,
            depth=depth,
            k=len(candidates),
            candidates=list(candidates),
            gold=list(gold),
            predicted=None,
            correct=0,
            missed=len(gold_set),
            incorrect=0,
            invalid=0,
            failed=True,
            raw=raw,
            error=error,
        )
    unique = list(dict.fromkeys(predicted))
    valid = [p for p in unique if p in candidates]
    return TurnScore(
        index=index,
        speaker=speaker,
        depth=depth,
        k=len(candidates),
        candidates=list(candidates),
        gold=list(gold),
        predicted=unique,
        correct=sum(p in gold_set for p in valid),
        missed=sum(g not in unique for g in gold_set),
        incorrect=sum(p not in gold_set for p in valid),
        invalid=len(unique) - len(valid),
        failed=False,
        raw=raw,
        error=error,
    )


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


class Counts(BaseModel):
    """Summed counts of a set of turns."""

    turns: int = 0
    failures: int = 0
    correct: int = 0
    missed: int = 0
    incorrect: int = 0
    invalid: int = 0

    @property
    def precision(self) -> float:
        return _ratio(self.correct, self.correct + self.incorrect + self.invalid)

    @property
    def recall(self) -> float:
        return _ratio(self.correct, self.correct + self.missed)

    @property
    def f1(self) -> float:
        return _f1(self.precision, self.recall)

    @classmethod
    def of(cls, turns: Sequence[TurnScore]) -> Counts:
        return cls(
            turns=len(turns),
            failures=sum(t.failed for t in turns),
            correct=sum(t.correct for t in turns),
            missed=sum(t.missed for t in turns),
            incorrect=sum(t.incorrect for t in turns),
            invalid=sum(t.invalid for t in turns),
        )


class LabelScore(BaseModel):
    label: str
    support: int = Field(description="turns with this gold label")
    predicted: int = Field(description="turns predicting it")
    tp: int
    precision: float
    recall: float
    f1: float


class Scores(BaseModel):
    """What the run's summary adds beside its metrics."""

    counts: Counts
    per_label: list[LabelScore]
    confusion: dict[str, dict[str, int]] = Field(
        description="gold label -> predicted label -> turns (each gold x each prediction of a "
        "turn; '(none)': nothing valid predicted, '(failure)': unreadable output)"
    )
    by_depth: dict[str, Counts]


# columns of the per-dialogue count matrix: 6 totals, then tp/fp/fn per label
_TOTALS = ("turns", "failures", "correct", "missed", "incorrect", "invalid")


def _matrix(
    dialogues: Sequence[Sequence[TurnScore]], labels: Sequence[str]
) -> np.ndarray[Any, np.dtype[np.float64]]:
    where = {label: i for i, label in enumerate(labels)}
    width = len(_TOTALS) + 3 * len(labels)
    out = np.zeros((len(dialogues), width))
    for d, turns in enumerate(dialogues):
        c = Counts.of(turns)
        out[d, : len(_TOTALS)] = [getattr(c, name) for name in _TOTALS]
        for t in turns:
            predicted = set(t.predicted or ())
            for label in set(t.gold) | predicted:
                if label not in where:
                    continue
                col = len(_TOTALS) + 3 * where[label]
                in_gold, in_pred = label in t.gold, label in predicted
                out[d, col] += in_gold and in_pred
                out[d, col + 1] += in_pred and not in_gold
                out[d, col + 2] += in_gold and not in_pred
    return out


def _stats(sums: np.ndarray[Any, np.dtype[np.float64]], n_labels: int) -> dict[str, np.ndarray]:
    """Rows of summed counts -> micro P/R/F1, failure rate, macro P/R/F1 (one value per row)."""
    correct, missed, incorrect, invalid = sums[:, 2], sums[:, 3], sums[:, 4], sums[:, 5]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(
            correct + incorrect + invalid > 0, correct / (correct + incorrect + invalid), 0
        )
        r = np.where(correct + missed > 0, correct / (correct + missed), 0)
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0)
        fail = np.where(sums[:, 0] > 0, sums[:, 1] / sums[:, 0], 0)
        per = sums[:, len(_TOTALS) :].reshape(len(sums), n_labels, 3)
        tp, fp, fn = per[:, :, 0], per[:, :, 1], per[:, :, 2]
        lp = np.where(tp + fp > 0, tp / (tp + fp), 0)
        lr = np.where(tp + fn > 0, tp / (tp + fn), 0)
        lf = np.where(lp + lr > 0, 2 * lp * lr / (lp + lr), 0)
        present = (tp + fn) > 0
        count = present.sum(axis=1)
        macro = {
            name: np.where(count > 0, (v * present).sum(axis=1) / np.maximum(count, 1), 0)
            for name, v in (("precision", lp), ("recall", lr), ("f1", lf))
        }
    return {
        "precision": p,
        "recall": r,
        "f1": f,
        "failure_rate": fail,
        **{f"macro_{k}": v for k, v in macro.items()},
    }


METRICS = ("precision", "recall", "f1", "failure_rate")


def _resample_weights(
    rng: np.random.Generator, count: int, resamples: int
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """How often each of ``count`` dialogues is drawn in each bootstrap resample (rows)."""
    idx = rng.integers(0, count, size=(resamples, count))
    weights = np.zeros((resamples, count))
    np.add.at(weights, (np.repeat(np.arange(resamples), count), idx.ravel()), 1.0)
    return weights


def dialogue_bootstrap(
    dialogues: Sequence[Sequence[TurnScore]],
    labels: Sequence[str],
    *,
    seed: int,
    label: str,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> dict[str, Estimate]:
    """Micro P/R/F1, failure rate and macro P/R/F1 over the turns of ``dialogues``, each with
    a percentile CI from resampling dialogues (``n`` = turns)."""
    matrix = _matrix(dialogues, labels)
    n_turns = int(matrix[:, 0].sum()) if len(matrix) else 0
    names = [*METRICS, "macro_precision", "macro_recall", "macro_f1"]
    if n_turns == 0:
        return {name: Estimate(value=None, n=0) for name in names}
    point = _stats(matrix.sum(axis=0, keepdims=True), len(labels))
    rng = seeded_rng(seed, label)
    d = len(matrix)
    weights = _resample_weights(rng, d, resamples)
    boot = _stats(weights @ matrix, len(labels))
    out = {}
    failures = int(matrix[:, 1].sum())
    for name in names:
        value = float(point[name][0])
        low, high = interval(np.asarray(boot[name], dtype=float), level) if d > 1 else (value,) * 2
        w_low = w_high = None
        if name == "failure_rate":
            w_low, w_high = wilson_interval(failures, n_turns, level)
        out[name] = Estimate(
            value=value, ci_low=low, ci_high=high, n=n_turns, wilson_low=w_low, wilson_high=w_high
        )
    return out


def metric_summaries(
    dialogues: Mapping[str, Sequence[TurnScore]],
    labels: Sequence[str],
    *,
    prefix: str,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, MetricSummary]:
    """``<prefix>.precision/recall/f1`` (micro over turns, macro over labels, by depth) and
    ``<prefix>.failure_rate`` (micro, by depth), every CI over dialogues."""
    order = sorted(dialogues)
    overall = dialogue_bootstrap(
        [dialogues[d] for d in order], labels, seed=seed, label=prefix, resamples=resamples
    )
    by_depth: dict[str, dict[str, Estimate]] = {}
    for bucket in ("1", "2", "3", "4+"):
        subset = [[t for t in dialogues[d] if _bucket(t.depth) == bucket] for d in order]
        subset = [s for s in subset if s]
        if subset:
            by_depth[bucket] = dialogue_bootstrap(
                subset, labels, seed=seed, label=f"{prefix}:{bucket}", resamples=resamples
            )
    out = {}
    for name in METRICS:
        macro_name = f"macro_{name}"
        out[f"{prefix}.{name}"] = MetricSummary(
            micro=overall[name],
            macro=overall.get(macro_name),
            by_group={b: e[name] for b, e in by_depth.items()},
        )
    return out


def _bucket(depth: int) -> str:
    return str(depth) if depth < 4 else "4+"


def scores(turns: Sequence[TurnScore], labels: Sequence[str]) -> Scores:
    """Per-label P/R/F1, the confusion view and counts by depth."""
    per_label = []
    for label in labels:
        tp = sum(label in t.gold and label in (t.predicted or ()) for t in turns)
        support = sum(label in t.gold for t in turns)
        predicted = sum(label in (t.predicted or ()) for t in turns)
        p, r = _ratio(tp, predicted), _ratio(tp, support)
        per_label.append(
            LabelScore(
                label=label,
                support=support,
                predicted=predicted,
                tp=tp,
                precision=p,
                recall=r,
                f1=_f1(p, r),
            )
        )
    confusion: dict[str, dict[str, int]] = {}
    for t in turns:
        valid = [p for p in (t.predicted or ()) if p in t.candidates]
        targets = ["(failure)"] if t.failed else (valid or ["(none)"])
        for g in t.gold:
            row = confusion.setdefault(g, {})
            for target in targets:
                row[target] = row.get(target, 0) + 1
    by_depth = {
        b: Counts.of([t for t in turns if _bucket(t.depth) == b]) for b in ("1", "2", "3", "4+")
    }
    return Scores(
        counts=Counts.of(turns),
        per_label=per_label,
        confusion=confusion,
        by_depth={b: c for b, c in by_depth.items() if c.turns},
    )


__all__ = [
    "Counts",
    "LabelScore",
    "Scores",
    "TurnScore",
    "dialogue_bootstrap",
    "metric_summaries",
    "score_turn",
    "scores",
]


def strategy_paper_metrics(
    dialogues: Mapping[str, Sequence[TurnScore]],
    strategies: Sequence[str],
    *,
    prefix: str,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> dict[str, MetricSummary]:
    """The figures a strategy-prediction paper reports over ``strategies`` (CaSiNo's seven):

    * ``<prefix>.mean_f1``: per strategy, the F1 of its positive class pooled over the
      utterances (present in the gold vs predicted), averaged over the strategies;
    * ``<prefix>.joint_accuracy``: the share of utterances whose predicted presence equals the
      gold presence for every strategy at once (Joint-A).

    Labels outside ``strategies`` are ignored; an unreadable output predicts nothing and is
    never jointly correct. CIs resample dialogues, like every bargain metric.
    """
    order = sorted(dialogues)
    n = len(strategies)
    matrix = np.zeros((len(order), 2 + 3 * n))  # turns, joint correct, (tp, fp, fn) per label
    for d, name in enumerate(order):
        for t in dialogues[name]:
            gold = set(t.gold) & set(strategies)
            predicted = set(t.predicted or ()) & set(strategies)
            matrix[d, 0] += 1
            matrix[d, 1] += (not t.failed) and gold == predicted
            for i, label in enumerate(strategies):
                col = 2 + 3 * i
                matrix[d, col] += label in gold and label in predicted
                matrix[d, col + 1] += label in predicted and label not in gold
                matrix[d, col + 2] += label in gold and label not in predicted

    def stats(sums: np.ndarray[Any, np.dtype[np.float64]]) -> dict[str, np.ndarray]:
        per = sums[:, 2:].reshape(len(sums), n, 3)
        tp, fp, fn = per[:, :, 0], per[:, :, 1], per[:, :, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
            joint = np.where(sums[:, 0] > 0, sums[:, 1] / sums[:, 0], 0.0)
        return {"mean_f1": f1.mean(axis=1), "joint_accuracy": joint}

    n_turns = int(matrix[:, 0].sum())
    if n_turns == 0:
        return {}
    point = stats(matrix.sum(axis=0, keepdims=True))
    rng = seeded_rng(seed, f"{prefix}:paper")
    count = len(matrix)
    weights = _resample_weights(rng, count, resamples)
    boot = stats(weights @ matrix)
    out = {}
    for name in ("mean_f1", "joint_accuracy"):
        value = float(point[name][0])
        low, high = (value, value)
        if count > 1:
            low, high = interval(np.asarray(boot[name], dtype=float), level)
        estimate = Estimate(value=value, ci_low=low, ci_high=high, n=n_turns)
        out[f"{prefix}.{name}"] = MetricSummary(micro=estimate)
    return out
