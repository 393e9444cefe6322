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
from todeval.scoring.multiwoz._bleu import N_STATS, corpus_bleu_many
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
    missing_dialogues: int = Field(
        0, description="test dialogues absent from the file: not scored, not in n_episodes"
    )
    missing_turns: int = Field(
        0, description="system turns absent at the end of given dialogues (not scored)"
    )
    warnings: list[str] = Field(default_factory=list)


def to_summary(
    result: MultiwozResult,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
) -> MultiwozSummary:
    """Aggregate a result into a ``Summary`` (benchmark ``multiwoz``) with bootstrap CIs."""
    dialogues = result.dialogues
    n = len(dialogues)
    boot = DialogueBootstrap(n, seed=seed, resamples=resamples, level=level, label="multiwoz")
    _register_columns(result, boot)
    metrics: dict[str, MetricSummary] = {}
    rate_samples: dict[str, Any] = {}
    for name, point in (("inform", result.inform), ("success", result.success)):
        if point is None:
            continue
        samples = boot.sums(name) / n if boot.active else None
        rate_samples[name] = samples
        by_group = {
            domain: boot.estimate(
                getattr(rates, name),
                boot.ratio(f"{name}@{domain}", f"has@{domain}") if boot.active else None,
                rates.dialogues,
            )
            for domain, rates in result.by_domain.items()
        }
        metrics[f"multiwoz.{name}"] = MetricSummary(
            micro=boot.estimate(point, samples, n), by_group=by_group
        )
    if result.bleu is not None:
        bleu_samples = _bleu_samples(boot) if boot.active else None
        rate_samples["bleu"] = bleu_samples
        metrics["multiwoz.bleu"] = MetricSummary(micro=boot.estimate(result.bleu, bleu_samples, n))
    if result.combined is not None:
        combined = None
        if boot.active:
            combined = 0.5 * (rate_samples["inform"] + rate_samples["success"])
            combined = combined + rate_samples["bleu"]
        metrics["multiwoz.combined"] = MetricSummary(
            micro=boot.estimate(result.combined, combined, n)
        )
    if result.richness is not None:
        lengths = boot.ratio("tokens", "turns") if boot.active else None
        metrics["multiwoz.richness.avg_length"] = MetricSummary(
            micro=boot.estimate(result.richness.avg_length, lengths, n)
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
        missing_dialogues=result.missing_dialogues,
        missing_turns=result.missing_turns,
        warnings=result.warnings,
    )


def _register_columns(result: MultiwozResult, boot: DialogueBootstrap) -> None:
    """Every per-dialogue quantity the intervals need, as named bootstrap columns."""
    dialogues = result.dialogues
    if result.inform is not None or result.success is not None:
        boot.add("inform", [100.0 * bool(d.inform_total) for d in dialogues])
        boot.add("success", [100.0 * bool(d.success_total) for d in dialogues])
        for domain in result.by_domain:
            boot.add(f"has@{domain}", [float(domain in d.domains) for d in dialogues])
            for name in ("inform", "success"):
                column = [100.0 * getattr(d, name).get(domain, False) for d in dialogues]
                boot.add(f"{name}@{domain}", column)
    if result.bleu is not None:
        stats = [d.bleu_stats or [0] * N_STATS for d in dialogues]
        for i in range(N_STATS):
            boot.add(f"bleu{i}", [s[i] for s in stats])
    if result.richness is not None:
        boot.add("tokens", [sum(d.lengths or []) for d in dialogues])
        boot.add("turns", [len(d.lengths or []) for d in dialogues])
    if result.dst is not None:
        boot.add("joint", [sum(d.dst_joint or []) for d in dialogues])
        boot.add("dst_turns", [len(d.dst_joint or []) for d in dialogues])
        for i, key in enumerate(("tp", "fp", "fn")):
            boot.add(key, [(d.dst_counts or [0, 0, 0])[i] for d in dialogues])


def _bleu_samples(boot: DialogueBootstrap) -> Any:
    import numpy as np

    stats = np.stack([boot.sums(f"bleu{i}") for i in range(N_STATS)], axis=1)
    return corpus_bleu_many(stats)


def _dst_metrics(result: MultiwozResult, boot: DialogueBootstrap) -> dict[str, MetricSummary]:
    import numpy as np

    assert result.dst is not None
    n = len(result.dialogues)
    samples: dict[str, Any] = {}
    if boot.active:
        samples["joint_accuracy"] = 100.0 * boot.ratio("joint", "dst_turns")
        tp, fp, fn = boot.sums("tp"), boot.sums("fp"), boot.sums("fn")
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
