"""Aggregate episode records into a :class:`~todeval.core.records.Summary`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from math import comb

import numpy as np

from todeval.core.outcome import Outcome
from todeval.core.prices import USD_PER_PETAFLOP
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


def _usage_totals(
    records: list[EpisodeRecord],
) -> tuple[dict[str, RoleUsage], dict[str, list[float]]]:
    usage: dict[str, RoleUsage] = {}
    latencies: dict[str, list[float]] = {}
    for r in records:
        for role, u in r.usage.items():
            total = usage.setdefault(role, RoleUsage())
            total.calls += u.calls
            total.cached_calls += u.cached_calls
            total.prompt_tokens += u.prompt_tokens
            total.completion_tokens += u.completion_tokens
            total.latency_s += u.latency_s
            total.cost_usd += u.cost_usd
            total.flops += u.flops
            total.estimated = total.estimated or u.estimated
            latencies.setdefault(role, []).extend(u.call_latencies_s)
    return dict(sorted(usage.items())), latencies


def _percentiles(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(arr, [50, 90, 99])
    return {
        "p50": float(p50),
        "p90": float(p90),
        "p99": float(p99),
        "max": float(arr.max()),
        "mean": float(arr.mean()),
    }


def _cost(
    usage: dict[str, RoleUsage], n_episodes: int, n_success: int | None
) -> dict[str, float | None]:
    usd = sum(u.cost_usd for u in usage.values())
    flops = sum(u.flops for u in usage.values())
    flop_usd = flops / 1e15 * USD_PER_PETAFLOP

    def per(total: float, n: int | None) -> float | None:
        return total / n if n else None

    return {
        "usd_total": usd,
        "usd_per_episode": per(usd, n_episodes),
        "usd_per_success": per(usd, n_success),
        "flops_total": flops,
        "flop_usd_total": flop_usd,
        "flop_usd_per_episode": per(flop_usd, n_episodes),
        "flop_usd_per_success": per(flop_usd, n_success),
        "tokens_total": float(sum(u.prompt_tokens + u.completion_tokens for u in usage.values())),
        "new_calls": float(sum(u.calls - u.cached_calls for u in usage.values())),
        "cached_calls": float(sum(u.cached_calls for u in usage.values())),
    }


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
    usage, latencies = _usage_totals(ordered)
    n_success = (
        sum(r.metrics.get(success_metric, 0.0) == 1.0 for r in scored) if success_metric else 0
    )
    return Summary(
        benchmark=benchmark,
        n_episodes=len(ordered),
        outcomes={o.value: outcomes[o.value] for o in Outcome},
        excluded=excluded,
        metrics=metrics,
        ci=CIMethod(resamples=resamples, seed=seed),
        usage=usage,
        cost=_cost(usage, len(scored), n_success if success_metric else None),
        latency={role: _percentiles(v) for role, v in latencies.items() if v},
        timing={"episode_seconds_total": round(sum(r.timing.duration_s for r in ordered), 3)},
    )
