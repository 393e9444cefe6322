"""What a generation run adds to the scorer's summary.

The scorer's :class:`~todeval.core.records.Summary` (metrics with bootstrap CIs over dialogues)
gains:

* ``<prefix>.format_failure_rate`` -- percent of turns whose reply failed the JSON schema
  (each such turn was scored as an empty response with no state change); the interval
  resamples dialogues, so ``n`` counts turns;
* ``usage``, ``cost``, ``latency`` and ``timing`` totals over the run's dialogues, computed by
  the generic runner summary (:func:`todeval.runner.summarize`);
* ``excluded``: dialogues that ended in an infrastructure error (not in the prediction file);
* :class:`GenerationStats` under ``generation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, MetricSummary, Summary
from todeval.runner.summary import summarize
from todeval.stats import summarize_metric


class GenerationStats(BaseModel):
    """Counts of the generation side of a run."""

    dialogues: int = Field(description="dialogues generated and scored")
    turns: int = Field(description="system turns generated")
    format_failures: int = Field(description="replies that failed the JSON schema")
    infrastructure_errors: int = Field(
        0, description="dialogues left out: the model never answered"
    )
    predictions: str = Field("", description="the prediction file, relative to the run directory")
    prompt_version: str = ""


def scored_records(records: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records that count (every outcome except infrastructure errors)."""
    return [r for r in records if r.outcome.counts_in_metrics]


def format_failure_values(records: Sequence[EpisodeRecord]) -> dict[str, list[float]]:
    """Per dialogue, 100 for each failed turn and 0 for each valid one."""
    values: dict[str, list[float]] = {}
    for record in records:
        turns: list[dict[str, Any]] = record.details.get("turns", [])
        values[record.task_id] = [100.0 if "format_error" in t else 0.0 for t in turns]
    return values


def _without_wilson(metric: MetricSummary) -> MetricSummary:
    """Drop the Wilson check: it assumes independent turns, and the unit here is a dialogue."""
    clear = {"wilson_low": None, "wilson_high": None}
    return metric.model_copy(
        update={
            "micro": metric.micro.model_copy(update=clear),
            "by_group": {g: e.model_copy(update=clear) for g, e in metric.by_group.items()},
        }
    )


def add_run_figures(
    summary: Summary,
    records: Sequence[EpisodeRecord],
    *,
    benchmark: str,
    prefix: str,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """The fields to merge into ``summary`` (``model_copy(update=...)``)."""
    scored = scored_records(records)
    generic = summarize(benchmark, records, seed=seed, resamples=resamples, grouped=False)
    groups = {r.task_id: r.group for r in scored}
    name = f"{prefix}.format_failure_rate"
    failure = _without_wilson(
        summarize_metric(
            format_failure_values(scored), groups, seed=seed, label=name, resamples=resamples
        )
    )
    failed_infra = sum(r.outcome is Outcome.INFRASTRUCTURE_ERROR for r in records)
    excluded = dict(summary.excluded)
    if failed_infra:
        excluded[Outcome.INFRASTRUCTURE_ERROR.value] = failed_infra
    return {
        "benchmark": benchmark,
        "metrics": {**summary.metrics, name: failure},
        "excluded": excluded,
        "usage": generic.usage,
        "cost": generic.cost,
        "latency": generic.latency,
        "timing": generic.timing,
    }


def generation_stats(
    records: Sequence[EpisodeRecord], *, predictions: str, prompt_version: str
) -> GenerationStats:
    scored = scored_records(records)
    return GenerationStats(
        dialogues=len(scored),
        turns=sum(r.turns for r in scored),
        format_failures=sum(int(r.details.get("format_failures", 0)) for r in scored),
        infrastructure_errors=len(records) - len(scored),
        predictions=predictions,
        prompt_version=prompt_version,
    )
