"""Aggregate episode records into a :class:`~todeval.core.records.Summary`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from math import comb

from todeval.core.outcome import Outcome
from todeval.core.records import CIMethod, EpisodeRecord, MetricSummary, RoleUsage, Summary
from todeval.stats.bootstrap import DEFAULT_RESAMPLES, summarize_metric


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """pass^k of one task: the chance that k trials drawn without replacement all succeed."""
    if k > trials:
        raise ValueError("k exceeds the number of trials")
    return comb(successes, k) / comb(trials, k)


def _pass_k_metrics(
    scored: list[EpisodeRecord],
    success_metric: str,
    groups: dict[str, str] | None,
    seed: int,
    resamples: int,
) -> dict[str, MetricSummary]:
    per_task: dict[str, list[float]] = {}
    for r in scored:
        if success_metric in r.metrics:
            per_task.setdefault(r.task_id, []).append(r.metrics[success_metric])
    if not per_task:
        return {}
    max_k = min(len(v) for v in per_task.values())
    out = {}
    for k in range(2, max_k + 1):
        values = {
            t: [pass_hat_k(sum(1 for x in v if x == 1.0), len(v), k)] for t, v in per_task.items()
        }
        name = f"{success_metric}.pass^{k}"
        out[name] = summarize_metric(values, groups, seed=seed, label=name, resamples=resamples)
    return out


def summarize(
    benchmark: str,
    records: Iterable[EpisodeRecord],
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    grouped: bool = True,
    success_metric: str | None = None,
) -> Summary:
    """Micro/macro/by-group estimates with bootstrap CIs over tasks.

    Episodes with an infrastructure error are excluded from every metric and counted in
    ``excluded``. With several trials per task and a binary ``success_metric``, pass^k
    (= C(c, k) / C(n, k) averaged over tasks) is reported for k = 2 .. trials.
    The result depends only on the records' content, never on their order.
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
    if success_metric:
        metrics.update(_pass_k_metrics(scored, success_metric, groups, seed, resamples))
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
