"""Turn a :class:`MultiwozResult` into a :class:`~todeval.core.records.Summary` with CIs.

Metric names: ``multiwoz.inform``, ``multiwoz.success``, ``multiwoz.bleu``,
``multiwoz.combined``, ``multiwoz.richness.*``, ``multiwoz.dst.*``. ``micro`` is the figure over
all scored dialogues, ``by_group`` the per-domain figure (Inform and Success only). Rates are
percentages. Richness counts and entropies are corpus statistics reported without an interval
(a bootstrap would bias them); the average length has one.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from todeval.core.records import CIMethod, Estimate, MetricSummary, Summary
from todeval.scoring.multiwoz._bleu import corpus_bleu_many
from todeval.scoring.multiwoz._bootstrap import DialogueBootstrap
from todeval.scoring.multiwoz._models import SCHEME, MultiwozResult, ScoringOptions

DEFAULT_RESAMPLES = 2000
CI_METHOD = (
    "percentile bootstrap over dialogues, one shared set of resamples for all metrics; "
    "corpus BLEU, Combined, slot P/R/F1 and per-domain rates recomputed on each resample "
    "from summed per-dialogue statistics (BLEU: cached n-gram counts)"
)
_RICHNESS_FIXED = ("entropy", "cond_entropy", "unique_words", "unique_bigrams",
                   "unique_trigrams", "msttr")  # fmt: skip


class MultiwozSummary(Summary):
    """``Summary`` plus the scoring scheme, the options used and warnings."""

    scheme: str = SCHEME
    source: str = ""
    options: ScoringOptions
    warnings: list[str] = Field(default_factory=list)


def to_summary(
    result: MultiwozResult,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
) -> MultiwozSummary:
    """Aggregate a result into a ``Summary`` (benchmark ``multiwoz``) with bootstrap CIs."""
    import numpy as np

    dialogues = result.dialogues
    n = len(dialogues)
    boot = DialogueBootstrap(n, seed=seed, resamples=resamples, level=level, label="multiwoz")
    metrics: dict[str, MetricSummary] = {}
    sampled: dict[str, Any] = {}

    for name, point in (("inform", result.inform), ("success", result.success)):
        if point is None:
            continue
        hits = np.array([100.0 * bool(getattr(d, f"{name}_total")) for d in dialogues])
        samples = boot.sums(hits) / n if boot.weights is not None else None
        sampled[name] = samples
        by_group = {}
        for domain, rates in result.by_domain.items():
            has = np.array([domain in d.domains for d in dialogues], dtype=float)
            ok = np.array([100.0 * getattr(d, name).get(domain, False) for d in dialogues])
            group_samples = boot.ratio(ok * has, has) if boot.weights is not None else None
            by_group[domain] = boot.estimate(getattr(rates, name), group_samples, rates.dialogues)
        metrics[f"multiwoz.{name}"] = MetricSummary(
            micro=boot.estimate(point, samples, n), by_group=by_group
        )

    if result.bleu is not None:
        stats = np.array([d.bleu_stats or [0] * 10 for d in dialogues], dtype=float)
        bleu_samples = corpus_bleu_many(boot.sums(stats)) if boot.weights is not None else None
        sampled["bleu"] = bleu_samples
        metrics["multiwoz.bleu"] = MetricSummary(micro=boot.estimate(result.bleu, bleu_samples, n))
    if result.combined is not None:
        combined_samples = None
        if boot.weights is not None:
            combined_samples = 0.5 * (sampled["inform"] + sampled["success"]) + sampled["bleu"]
        metrics["multiwoz.combined"] = MetricSummary(
            micro=boot.estimate(result.combined, combined_samples, n)
        )

    if result.richness is not None:
        lengths = np.array([sum(d.lengths or []) for d in dialogues], dtype=float)
        turns = np.array([len(d.lengths or []) for d in dialogues], dtype=float)
        length_samples = boot.ratio(lengths, turns) if boot.weights is not None else None
        metrics["multiwoz.richness.avg_length"] = MetricSummary(
            micro=boot.estimate(result.richness.avg_length, length_samples, n)
        )
        for key in _RICHNESS_FIXED:
            value = float(getattr(result.richness, key))
            metrics[f"multiwoz.richness.{key}"] = MetricSummary(micro=Estimate(value=value, n=n))

    if result.dst is not None:
        metrics.update(_dst_metrics(result, boot))

    outcomes = {"scored": n}
    if result.success is not None:
        won = sum(bool(d.success_total) for d in dialogues)
        outcomes = {"success": won, "failure": n - won}
    return MultiwozSummary(
        benchmark="multiwoz",
        n_episodes=n,
        outcomes=outcomes,
        metrics=metrics,
        ci=CIMethod(method=CI_METHOD, level=level, resamples=resamples, seed=seed),
        source=result.source,
        options=result.options,
        warnings=result.warnings,
    )


def _dst_metrics(result: MultiwozResult, boot: DialogueBootstrap) -> dict[str, MetricSummary]:
    import numpy as np

    assert result.dst is not None
    dialogues = result.dialogues
    n = len(dialogues)
    joint = np.array([sum(d.dst_joint or []) for d in dialogues], dtype=float)
    turns = np.array([len(d.dst_joint or []) for d in dialogues], dtype=float)
    counts = np.array([d.dst_counts or [0, 0, 0] for d in dialogues], dtype=float)
    samples: dict[str, Any] = {}
    if boot.weights is not None:
        samples["joint_accuracy"] = 100.0 * boot.ratio(joint, turns)
        tp, fp, fn = boot.sums(counts).T
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(tp + fp > 0, 100.0 * tp / (tp + fp), 0.0)
            r = np.where(tp + fn > 0, 100.0 * tp / (tp + fn), 0.0)
            f1 = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)
        samples.update(slot_precision=p, slot_recall=r, slot_f1=f1)
    out = {}
    for key in ("joint_accuracy", "slot_precision", "slot_recall", "slot_f1"):
        value = float(getattr(result.dst, key))
        out[f"multiwoz.dst.{key}"] = MetricSummary(micro=boot.estimate(value, samples.get(key), n))
    return out
