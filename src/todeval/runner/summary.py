"""Aggregate episode records into a :class:`~todeval.core.records.Summary`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from todeval.core.outcome import Outcome
from todeval.core.records import CIMethod, EpisodeRecord, RoleUsage, Summary
from todeval.stats.bootstrap import DEFAULT_RESAMPLES, summarize_metric


def summarize(
    benchmark: str,
    records: Iterable[EpisodeRecord],
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    grouped: bool = True,
) -> Summary:
    """Micro/macro/by-group estimates with bootstrap CIs over tasks.

    Episodes with an infrastructure error are excluded from every metric and counted in
    ``excluded``. The result depends only on the records' content, never on their order.
    """
    ordered = sorted(records, key=lambda r: (r.task_id, r.trial))
    outcomes = Counter(r.outcome.value for r in ordered)
    scored = [r for r in ordered if r.outcome.counts_in_metrics]
    excluded = {
        o.value: outcomes[o.value] for o in Outcome if not o.counts_in_metrics and outcomes[o.value]
    }
    names = sorted({m for r in scored for m in r.metrics})
    groups = {r.task_id: r.group for r in scored} if grouped else None
    metrics = {}
    for name in names:
        per_task: dict[str, list[float]] = {}
        for r in scored:
            if name in r.metrics:
                per_task.setdefault(r.task_id, []).append(r.metrics[name])
        metrics[name] = summarize_metric(
            per_task, groups, seed=seed, label=name, resamples=resamples
        )
    usage: dict[str, RoleUsage] = {}
    for r in ordered:
        for role, u in r.usage.items():
            total = usage.setdefault(role, RoleUsage())
            for field in ("calls", "cached_calls", "prompt_tokens", "completion_tokens"):
                setattr(total, field, getattr(total, field) + getattr(u, field))
            for field in ("latency_s", "cost_usd", "flops"):
                setattr(total, field, getattr(total, field) + getattr(u, field))
            total.estimated = total.estimated or u.estimated
    return Summary(
        benchmark=benchmark,
        n_episodes=len(ordered),
        outcomes={o.value: outcomes[o.value] for o in Outcome},
        excluded=excluded,
        metrics=metrics,
        ci=CIMethod(resamples=resamples, seed=seed),
        usage=dict(sorted(usage.items())),
        timing={"episode_seconds_total": round(sum(r.timing.duration_s for r in ordered), 3)},
    )
