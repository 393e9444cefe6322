"""Summarising a panel: spread across the varied members, rank stability of the subjects.

* **spread** of one subject member's score (micro) across the varied members: max - min (the
  clem:todd paper's definition) and the sample standard deviation (n - 1), both reported,
  with the varied members it scores best and worst under;
* **rank stability** (two or more subject members): the ranking under each varied member
  (ties shown as ``=``), Kendall's tau-b between every pair of rankings (undefined when one is
  all ties), and whether the top changes -- a tie at the top is no change.

A missing estimate counts as 0 in rankings (a run that scored nothing ranks last).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence

from todeval.core.records import Estimate, Summary
from todeval.panels.model import PanelSummary, RankStability, SubjectSpread, pair_key
from todeval.results.profile import PanelRoles
from todeval.stats import kendall_tau


def spread_of(per_member: Mapping[str, Estimate]) -> SubjectSpread:
    values = {m: e.value for m, e in per_member.items() if e.value is not None}
    if not values:
        return SubjectSpread(per_member=dict(per_member))
    best = max(values, key=lambda m: (values[m], m))
    worst = min(values, key=lambda m: (values[m], m))
    return SubjectSpread(
        per_member=dict(per_member),
        spread_max_min=values[best] - values[worst],
        std_sample=statistics.stdev(values.values()) if len(values) > 1 else None,
        best=best,
        worst=worst,
    )


def _order(scores: Mapping[str, float]) -> list[str]:
    return [s for s, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def _ranking_text(scores: Mapping[str, float], order: Sequence[str]) -> str:
    text = order[0]
    for prev, cur in itertools.pairwise(order):
        text += (" = " if scores[prev] == scores[cur] else " > ") + cur
    return text


def rank_stability(
    spread: Mapping[str, SubjectSpread], subjects: Sequence[str], varied: Sequence[str]
) -> RankStability:
    scores: dict[str, dict[str, float]] = {}
    for v in varied:
        scores[v] = {}
        for s in subjects:
            est = spread[s].per_member.get(v) if s in spread else None
            scores[v][s] = est.value if est is not None and est.value is not None else 0.0
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
) -> PanelSummary:
    """The panel of ``summaries`` (``(subject member, varied member) -> Summary``).

    ``benchmark`` defaults to the summaries' own; pairs without a summary, or whose summary
    lacks ``metric``, are left out of the spread (and rank last). Subject members in
    ``controls`` (played by a privileged player) keep their spread but are never ranked."""
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
        spread[s] = spread_of(per_member)
    return PanelSummary(
        benchmark=benchmark,
        metric=metric,
        subject=roles.subject,
        varied=roles.varied,
        members={roles.subject: list(subjects), roles.varied: list(varied)},
        runs=dict(runs),
        spread=spread,
        rank_stability=rank_stability(spread, ranked, varied) if len(ranked) > 1 else None,
        controls=[s for s in subjects if s in controls],
    )
