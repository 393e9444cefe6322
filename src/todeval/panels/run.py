"""Running a panel: every subject member against every varied member, one run directory each.

The benchmark supplies what only it knows -- how a member's player and model go into its
config (``assign``), how a config becomes a plan (``check``) and how a plan is executed
(``execute``) -- and :func:`run_panel` does the rest:

1. checks the whole panel and builds the config and the plan of every pair first, so a bad
   member (a duplicate name, names or pairs sharing a directory, an unknown player, a player
   refusing the task set) fails with one line before anything runs;
2. runs each pair into ``<out>/<subject>__<varied>/`` (an ordinary run directory: resumable,
   refused if its config changed);
3. writes ``<out>/panel.json`` atomically and prints the panel's tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from todeval.console.panel import panel_table
from todeval.core.records import Summary
from todeval.errors import BadInputError, UsageError
from todeval.panels.members import Member, check_members
from todeval.panels.model import (
    PANEL_FILE,
    PanelSummary,
    SimulatorFaults,
    pair_key,
    write_panel,
)
from todeval.panels.summary import summarize_panel
from todeval.panels.words import PanelWords
from todeval.results.profile import BenchmarkProfile, PanelRoles
from todeval.results.runs import load_run
from todeval.runner.execute import RunResult
from todeval.runner.naming import selection_suffix, slug
from todeval.runner.options import RunSettings
from todeval.runner.plan import RunPlan
from todeval.runner.store import RunDirectory

C = TypeVar("C", bound=BaseModel)

Assign = Callable[[C, str, Member], C]
"""``assign(config, role, member) -> config`` with that role's player (and model) set; raises
:class:`~todeval.errors.UsageError` for a member the role cannot take (e.g. a model for a role
without one)."""


@dataclass(frozen=True)
class PanelMembers:
    subjects: list[Member]
    varied: list[Member]
    file: str | None = None  # the panel file members came from: a bad member is bad input


@dataclass(frozen=True)
class PanelPair(Generic[C]):
    subject: Member
    varied: Member
    config: C

    @property
    def key(self) -> str:
        return pair_key(self.subject.name, self.varied.name)

    @property
    def dirname(self) -> str:
        return f"{self.subject.dirname}__{self.varied.dirname}"


def panel_roles(profile: BenchmarkProfile) -> PanelRoles:
    if profile.panel is None:
        raise ValueError(f"the profile of {profile.benchmark} declares no panel roles")
    return profile.panel


def panel_pairs(
    base: C, roles: PanelRoles, members: PanelMembers, assign: Assign[C]
) -> list[PanelPair[C]]:
    """Every (subject, varied) pair with its config, subjects outermost."""
    check_members(roles.subject, members.subjects)
    check_members(roles.varied, members.varied)
    pairs = [
        PanelPair(s, v, assign(assign(base, roles.subject, s), roles.varied, v))
        for s in members.subjects
        for v in members.varied
    ]
    seen: dict[str, PanelPair[C]] = {}
    for pair in pairs:  # 'a__b' x 'c' and 'a' x 'b__c' would share a run directory
        other = seen.setdefault(pair.dirname.casefold(), pair)
        if other is not pair:
            raise UsageError(
                f"panel pairs {other.key!r} and {pair.key!r} would share the run directory "
                f"{pair.dirname!r}; rename a member"
            )
    return pairs


def _close(plan: RunPlan) -> None:
    """Release what building the plan opened (model backends, the response cache)."""
    aclose = plan.aclose
    if aclose is None:
        return

    async def close() -> None:
        await aclose()

    asyncio.run(close())


def run_panel(
    profile: BenchmarkProfile,
    base: C,
    members: PanelMembers,
    *,
    assign: Assign[C],
    check: Callable[[C], RunPlan],
    execute: Callable[[C, Path], RunResult],
    out: Path,
    metric: str | None = None,
    show: bool = True,
) -> PanelSummary:
    """Run the panel into ``out`` and return what ``panel.json`` holds.

    ``check(config)`` builds a pair's plan (it is closed again, unused); ``execute(config,
    run_dir)`` runs it. ``metric`` defaults to the profile's primary metric; ``show`` prints
    the tables."""
    roles = panel_roles(profile)
    pairs = panel_pairs(base, roles, members, assign)
    for pair in pairs:  # fail on a bad member before running anything
        try:
            _close(check(pair.config))
        except UsageError as exc:
            if members.file is None:
                raise
            raise BadInputError(f"{members.file}: {exc.message}") from None
    summaries: dict[tuple[str, str], Summary] = {}
    task_values: dict[tuple[str, str], dict[str, float]] = {}
    controls: set[str] = set()
    metric = metric or profile.primary
    for pair in pairs:
        result = execute(pair.config, out / pair.dirname)
        summaries[(pair.subject.name, pair.varied.name)] = result.summary
        per_task = load_run(result.run_dir).values.get(metric, {})
        task_values[(pair.subject.name, pair.varied.name)] = {
            task: sum(v) / len(v) for task, v in per_task.items() if v
        }
        subject = RunDirectory(result.run_dir).read_manifest().roles.get(roles.subject)
        if subject is not None and subject.privileged:
            controls.add(pair.subject.name)
    panel = summarize_panel(
        summaries,
        [m.name for m in members.subjects],
        [m.name for m in members.varied],
        {p.key: p.dirname for p in pairs},
        metric,
        roles=roles,
        benchmark=profile.benchmark,
        controls=sorted(controls),
        task_values=task_values,
        seed=int(getattr(base, "seed", 0)),
        lower_is_better=profile.better_direction(metric) == "lower",
    )
    panel.simulator_faults = simulator_faults(profile, roles.varied, out, pairs)
    write_panel(out, panel)
    if show:
        print(panel_table(panel, PanelWords.of(profile, roles.subject, roles.varied, metric)))
        for member, faults in panel.simulator_faults.items():
            if faults.rate is not None:
                print(
                    f"{member}: simulator faults in {faults.with_fault} of {faults.episodes} "
                    f"episodes, {faults.rate:.3f} [{faults.low:.3f}, {faults.high:.3f}] "
                    "(todeval review)"
                )
        print(f"\npanel directory: {out} ({PANEL_FILE} and one run directory per pair)")
    return panel


def simulator_faults(
    profile: BenchmarkProfile, varied: str, out: Path, pairs: Sequence[Any]
) -> dict[str, SimulatorFaults]:
    """Per varied member, the share of its episodes with a simulator fault, when the profile
    names a reviewer whose simulator is the varied role (else nothing)."""
    from todeval.review import Review, summarise
    from todeval.review.reading import load_reviewer, review_with

    if profile.reviewer is None:
        return {}
    reviewer = load_reviewer(profile.reviewer)
    if reviewer.simulator_role != varied:
        return {}
    by_member: dict[str, list[Review]] = {}
    for pair in pairs:
        by_member.setdefault(pair.varied.name, []).extend(review_with(reviewer, out / pair.dirname))
    out_rates = {}
    for member, reviews in by_member.items():
        rate = summarise(reviewer, reviews).simulator_fault_rate
        out_rates[member] = SimulatorFaults(
            episodes=rate.n, with_fault=rate.k, rate=rate.value, low=rate.low, high=rate.high
        )
    return out_rates


def default_panel_out(
    subjects: Sequence[Member],
    settings: RunSettings,
    *parts: str,
    ids: Sequence[str] | None = None,
) -> str:
    """``runs/panel-<parts>-<subjects joined by +>-s<seed>`` and the selection's suffix as a
    single run's directory has it (``-n<limit>``, ``-ids<hash>``, ``-k<trials>``; e.g.
    ``runs/panel-toy-bisect-s0-n10``)."""
    names = "+".join(m.dirname for m in subjects)
    base = "-".join(["runs/panel", *(slug(p) for p in parts), names, f"s{settings.seed}"])
    return base + selection_suffix(
        limit=settings.limit, limit_mode=settings.limit_mode, ids=ids, trials=settings.trials
    )
