"""Aggregate episode records into a :class:`~todeval.core.records.Summary`.

Aggregation is one streaming pass that keeps only numbers (metric values per task, usage
totals, call latencies), so memory does not grow with the size of the records' transcripts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from math import comb

import numpy as np

from todeval.core.outcome import Outcome
from todeval.core.prices import USD_PER_PETAFLOP
from todeval.core.records import (
    CIMethod,
    EpisodeRecord,
    MetricSummary,
    RoleUsage,
    Summary,
    TrialsSummary,
)
from todeval.stats.bootstrap import DEFAULT_RESAMPLES, summarize_metric
from todeval.stats.proportions import is_binary
from todeval.stats.trials import consistency, variance_split


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """pass^k of one task: the chance that k trials drawn without replacement all succeed."""
    if k > trials:
        raise ValueError("k exceeds the number of trials")
    return comb(successes, k) / comb(trials, k)


@dataclass
class _Accumulator:
    outcomes: Counter[str] = field(default_factory=Counter)
    # metric -> task -> [(trial, value)]; sorted by trial before use, so the result does not
    # depend on the order episodes finished in
    values: dict[str, dict[str, list[tuple[int, float]]]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    usage: dict[str, RoleUsage] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    labels: dict[str, Counter[str]] = field(default_factory=dict)
    # per role: each episode's dollars and FLOPs, summed exactly (math.fsum) at the end so the
    # totals do not depend on the order episodes finished in
    costs: dict[str, list[float]] = field(default_factory=dict)
    flops: dict[str, list[float]] = field(default_factory=dict)
    n_episodes: int = 0
    n_scored: int = 0
    episode_seconds: float = 0.0

    def add(self, r: EpisodeRecord) -> None:
        self.n_episodes += 1
        self.outcomes[r.outcome.value] += 1
        self.episode_seconds += r.timing.duration_s
        for label, label_value in r.labels.items():
            self.labels.setdefault(label, Counter())[label_value] += 1
        for role, u in r.usage.items():
            total = self.usage.setdefault(role, RoleUsage())
            total.calls += u.calls
            total.cached_calls += u.cached_calls
            total.prompt_tokens += u.prompt_tokens
            total.completion_tokens += u.completion_tokens
            total.latency_s += u.latency_s
            self.costs.setdefault(role, []).append(u.cost_usd)
            self.flops.setdefault(role, []).append(u.flops)
            total.estimated = total.estimated or u.estimated
            total.tokens_unknown_calls += u.tokens_unknown_calls
            self.latencies.setdefault(role, []).extend(u.call_latencies_s)
        if not r.outcome.counts_in_metrics:
            return
        self.n_scored += 1
        self.groups[r.task_id] = r.group
        for name, value in r.metrics.items():
            self.values.setdefault(name, {}).setdefault(r.task_id, []).append((r.trial, value))

    def usage_totals(self) -> dict[str, RoleUsage]:
        for role, total in self.usage.items():
            total.cost_usd = math.fsum(self.costs.get(role, []))
            total.flops = math.fsum(self.flops.get(role, []))
        return dict(sorted(self.usage.items()))

    def per_task(self, name: str) -> dict[str, list[float]]:
        return {t: [v for _, v in sorted(pairs)] for t, pairs in self.values.get(name, {}).items()}


def _pass_k_metrics(
    per_task: dict[str, list[float]],
    success_metric: str,
    groups: dict[str, str] | None,
    seed: int,
    resamples: int,
) -> dict[str, MetricSummary]:
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
    usd = math.fsum(u.cost_usd for u in usage.values())
    flops = math.fsum(u.flops for u in usage.values())
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
    acc = _Accumulator()
    for record in records:
        acc.add(record)
    groups = dict(sorted(acc.groups.items())) if grouped else None
    metrics = {
        name: summarize_metric(
            acc.per_task(name), groups, seed=seed, label=name, resamples=resamples
        )
        for name in sorted(acc.values)
    }
    n_success: int | None = None
    if success_metric:
        success = acc.per_task(success_metric)
        metrics.update(_pass_k_metrics(success, success_metric, groups, seed, resamples))
        n_success = sum(1 for v in success.values() for x in v if x == 1.0)
    usage = acc.usage_totals()
    trials = _trials(acc, success_metric, seed, resamples)
    return Summary(
        benchmark=benchmark,
        n_episodes=acc.n_episodes,
        outcomes={o.value: acc.outcomes[o.value] for o in Outcome},
        excluded={
            o.value: acc.outcomes[o.value]
            for o in Outcome
            if not o.counts_in_metrics and acc.outcomes[o.value]
        },
        metrics=metrics,
        ci=CIMethod(resamples=resamples, seed=seed),
        usage=usage,
        cost=_cost(usage, acc.n_scored, n_success),
        latency={role: _percentiles(v) for role, v in sorted(acc.latencies.items()) if v},
        labels={k: dict(sorted(v.items())) for k, v in sorted(acc.labels.items())},
        timing={"episode_seconds_total": round(acc.episode_seconds, 3)},
        trials=trials,
    )


def _trials(
    acc: _Accumulator, success_metric: str | None, seed: int, resamples: int
) -> TrialsSummary | None:
    """Consistency of the success metric and every metric's variance split, when some task
    was played more than once (:mod:`todeval.stats.trials`)."""
    per_metric = {name: acc.per_task(name) for name in sorted(acc.values)}
    most = max((len(v) for per in per_metric.values() for v in per.values()), default=0)
    if most < 2:
        return None
    success = per_metric.get(success_metric or "")
    kept = None
    if success_metric and success and is_binary(x for v in success.values() for x in v):
        kept = consistency(success_metric, success)
    return TrialsSummary(
        max_trials=most,
        tasks=len({t for per in per_metric.values() for t in per}),
        consistency=kept,
        variance=[
            variance_split(name, [per[t] for t in sorted(per)], seed=seed, resamples=resamples)
            for name, per in per_metric.items()
        ],
    )
