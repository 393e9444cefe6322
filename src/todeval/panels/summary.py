"""Summarising a panel: spread across the varied members, rank stability of the subjects.

* **spread** of one subject member's score (micro) across the varied members: max - min (the
  clem:todd paper's definition) and the sample standard deviation (n - 1), both reported,
  with the varied members it scores best and worst under;
* **rank stability** (two or more subject members): the ranking under each varied member
  (ties shown as ``=``), Kendall's tau-b between every pair of rankings (undefined when one is
  all ties), and whether the top changes -- a tie at the top is no change.

A missing estimate counts as 0 in rankings (a run that scored nothing ranks last).

With the runs' per-task values (``task_values``) every figure gets an interval from a paired
bootstrap over the tasks the runs share (the same tasks drawn for every run of a resample):
the spread (max - min and std) of each subject member, the difference between every two
varied members for each subject member, and Kendall's tau between every two rankings.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from todeval.core.records import Estimate, Summary
from todeval.panels.model import (
    PairDifference,
    PanelSummary,
    RankStability,
    SubjectSpread,
    pair_key,
)
from todeval.results.profile import PanelRoles
from todeval.stats import kendall_tau
from todeval.stats.bootstrap import DEFAULT_RESAMPLES, interval, seeded_rng
from todeval.stats.paired import paired_bootstrap

TaskValues = Mapping[tuple[str, str], Mapping[str, float]]
"""``(subject member, varied member) -> task id -> the task's mean of the metric``."""


def spread_of(
    per_member: Mapping[str, Estimate], *, lower_is_better: bool = False
) -> SubjectSpread:
    """A subject's spread over the varied members; ``best`` and ``worst`` follow the metric's
    declared direction."""
    values = {m: e.value for m, e in per_member.items() if e.value is not None}
    if not values:
        return SubjectSpread(per_member=dict(per_member))
    highest = max(values, key=lambda m: (values[m], m))
    lowest = min(values, key=lambda m: (values[m], m))
    best, worst = (lowest, highest) if lower_is_better else (highest, lowest)
    return SubjectSpread(
        per_member=dict(per_member),
        spread_max_min=values[highest] - values[lowest],
        std_sample=statistics.stdev(values.values()) if len(values) > 1 else None,
        best=best,
        worst=worst,
    )


def _shared(values: TaskValues, keys: Sequence[tuple[str, str]]) -> list[str]:
    found = [set(values[k]) for k in keys if k in values]
    if len(found) < len(keys) or not found:
        return []
    return sorted(set.intersection(*found))


def _pair_interval(samples: np.ndarray) -> tuple[float, float]:
    low, high = interval(samples, 0.95)
    return (low, high)


def with_intervals(
    spread: SubjectSpread,
    subject: str,
    varied: Sequence[str],
    values: TaskValues,
    *,
    seed: int,
    resamples: int,
) -> SubjectSpread:
    """``spread`` with paired bootstrap intervals over the tasks all its runs scored."""
    members = [v for v in varied if (subject, v) in values]
    tasks = _shared(values, [(subject, v) for v in members])
    if len(members) < 2 or len(tasks) < 2:
        return spread
    matrix = np.array([[values[(subject, v)][t] for t in tasks] for v in members], dtype=float)
    idx = seeded_rng(seed, f"panel-spread:{subject}").integers(
        0, len(tasks), (resamples, len(tasks))
    )
    means = matrix[:, idx].mean(axis=2)  # members x resamples
    differences = {}
    for i, a in enumerate(members):
        for j in range(i + 1, len(members)):
            b = members[j]
            est = paired_bootstrap(
                list(matrix[i]), list(matrix[j]), seed=seed, label=f"panel:{subject}:{a}:{b}",
                resamples=resamples,
            )  # fmt: skip
            differences[pair_key(a, b)] = PairDifference(
                diff=est.diff, ci_low=est.ci_low, ci_high=est.ci_high, p_value=est.p_value
            )
    return spread.model_copy(
        update={
            "n_tasks": len(tasks),
            "spread_ci": _pair_interval(means.max(axis=0) - means.min(axis=0)),
            "std_ci": _pair_interval(means.std(axis=0, ddof=1)),
            "differences": differences,
        }
    )


def tau_intervals(
    subjects: Sequence[str],
    varied: Sequence[str],
    values: TaskValues,
    *,
    seed: int,
    resamples: int,
) -> tuple[dict[str, tuple[float, float] | None], int | None]:
    """95% bootstrap intervals of Kendall's tau between every two varied members' rankings,
    resampling the tasks every run of the panel scored (None where too few resamples define
    tau)."""
    keys = [(s, v) for s in subjects for v in varied]
    tasks = _shared(values, keys)
    if len(tasks) < 2 or len(subjects) < 2:
        return {}, None
    cube = np.array(
        [[[values[(s, v)][t] for t in tasks] for s in subjects] for v in varied], dtype=float
    )  # varied x subjects x tasks
    idx = seeded_rng(seed, "panel-tau").integers(0, len(tasks), (resamples, len(tasks)))
    means = cube[:, :, idx].mean(axis=3)  # varied x subjects x resamples
    out: dict[str, tuple[float, float] | None] = {}
    for i, a in enumerate(varied):
        for j in range(i + 1, len(varied)):
            taus = [
                kendall_tau(list(means[i, :, r]), list(means[j, :, r])) for r in range(resamples)
            ]
            defined = np.array([x for x in taus if x is not None], dtype=float)
            enough = len(defined) >= resamples // 2
            out[pair_key(a, varied[j])] = _pair_interval(defined) if enough else None
    return out, len(tasks)


def _order(scores: Mapping[str, float]) -> list[str]:
    return [s for s, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def _ranking_text(scores: Mapping[str, float], order: Sequence[str]) -> str:
    text = order[0]
    for prev, cur in itertools.pairwise(order):
        text += (" = " if scores[prev] == scores[cur] else " > ") + cur
    return text


def rank_stability(
    spread: Mapping[str, SubjectSpread],
    subjects: Sequence[str],
    varied: Sequence[str],
    *,
    lower_is_better: bool = False,
) -> RankStability:
    """Each varied member's ranking of the subjects, best first. ``lower_is_better`` ranks
    ascending (the metric's declared direction); a subject without a value ranks last."""
    scores: dict[str, dict[str, float]] = {}
    for v in varied:
        found: dict[str, float] = {}
        for s in subjects:
            est = spread[s].per_member.get(v) if s in spread else None
            if est is not None and est.value is not None:
                found[s] = -est.value if lower_is_better else est.value
        # ranked on a higher-is-better scale; a missing value sits below every value found
        # (0.0 on a higher-is-better metric, as before)
        missing = min([*found.values(), 0.0]) - 1.0 if lower_is_better else 0.0
        scores[v] = {s: found.get(s, missing) for s in subjects}
    rankings = {v: _order(scores[v]) for v in varied}
    taus = {
        pair_key(a, b): kendall_tau(
            [scores[a][s] for s in subjects], [scores[b][s] for s in subjects]
        )
        for a, b in itertools.combinations(varied, 2)
    }
    tops = {
        v: sorted(s for s, x in scores[v].items() if x == max(scores[v].values())) for v in varied
    }
    common = set.intersection(*(set(t) for t in tops.values())) if tops else set()
    return RankStability(
        rankings=rankings,
        ranking_text={v: _ranking_text(scores[v], rankings[v]) for v in varied},
        kendall_tau=taus,
        top={v: " = ".join(t) for v, t in tops.items()},
        top_changes=not common,
    )


def summarize_panel(
    summaries: Mapping[tuple[str, str], Summary],
    subjects: Sequence[str],
    varied: Sequence[str],
    runs: Mapping[str, str],
    metric: str,
    *,
    roles: PanelRoles,
    benchmark: str | None = None,
    controls: Sequence[str] = (),
    task_values: TaskValues | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    lower_is_better: bool = False,
) -> PanelSummary:
    """The panel of ``summaries`` (``(subject member, varied member) -> Summary``).

    ``benchmark`` defaults to the summaries' own; pairs without a summary, or whose summary
    lacks ``metric``, are left out of the spread (and rank last). Subject members in
    ``controls`` (played by a privileged player) keep their spread but are never ranked.
    ``task_values`` (each run's per-task means of ``metric``) adds the bootstrap intervals.
    ``lower_is_better``: the metric's declared direction, which the rankings follow."""
    if benchmark is None:
        benchmark = next((s.benchmark for s in summaries.values()), "")
    ranked = [s for s in subjects if s not in controls]
    spread: dict[str, SubjectSpread] = {}
    for s in subjects:
        per_member: dict[str, Estimate] = {}
        for v in varied:
            summary = summaries.get((s, v))
            if summary is not None and metric in summary.metrics:
                per_member[v] = summary.metrics[metric].micro
        spread[s] = spread_of(per_member, lower_is_better=lower_is_better)
        if task_values:
            spread[s] = with_intervals(
                spread[s], s, varied, task_values, seed=seed, resamples=resamples
            )
    stability = (
        rank_stability(spread, ranked, varied, lower_is_better=lower_is_better)
        if len(ranked) > 1
        else None
    )
    if stability is not None and task_values:
        taus, n = tau_intervals(ranked, varied, task_values, seed=seed, resamples=resamples)
        stability = stability.model_copy(update={"kendall_tau_ci": taus, "tau_tasks": n})
    return PanelSummary(
        benchmark=benchmark,
        metric=metric,
        subject=roles.subject,
        varied=roles.varied,
        members={roles.subject: list(subjects), roles.varied: list(varied)},
        runs=dict(runs),
        spread=spread,
        rank_stability=stability,
        controls=[s for s in subjects if s in controls],
    )
