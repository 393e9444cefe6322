"""Choosing a run's tasks: explicit ids, then ``limit`` of them, stratified or the first.

``--limit N`` draws **stratified** by default: the N tasks are spread over the task groups (the
groups of the episodes' :class:`~todeval.runner.execute.EpisodeJob`) in proportion to their
sizes, by largest remainders, with at least one task per group while N is at least the number
of groups; within a group the tasks are a seeded sample. The draw's seed is derived from the
run seed (:func:`selection_seed`), so one command always selects the same tasks, and the chosen
ids come back in the set's own order. ``--limit-mode first`` takes the first N in the set's
order instead (0.1.0's rule).

:func:`select_for_run` does all of it for a benchmark's config and returns the
:class:`~todeval.core.identity.Selection` its plan records.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol, get_args

from todeval.core.identity import Selection, SelectionMode
from todeval.core.rng import derive_seed
from todeval.errors import UsageError

LimitMode = Literal["stratified", "first"]
LIMIT_MODES: tuple[str, ...] = get_args(LimitMode)
"""How ``--limit`` draws (the first is the default)."""


class RunSettings(Protocol):
    """What a selection reads of a config (``todeval.runner.options.RunSettings`` has it)."""

    @property
    def limit(self) -> int | None: ...

    @property
    def limit_mode(self) -> LimitMode: ...

    @property
    def seed(self) -> int: ...


def selection_seed(run_seed: int) -> int:
    """The seed of a run's stratified draw, derived from the run seed."""
    return derive_seed(run_seed, "", 0, "selection")


def allocate(sizes: Mapping[str, int], n: int, seed: int = 0) -> dict[str, int]:
    """How many of ``n`` tasks each group gets: proportional to ``sizes`` by largest remainders,
    at least one per group while ``n`` is at least the number of groups, never more than a
    group holds. Ties between equal remainders are broken by a draw seeded with ``seed``."""
    groups = [g for g, size in sizes.items() if size > 0]
    total = sum(sizes[g] for g in groups)
    if n >= total:
        return {g: sizes[g] for g in groups}
    tie = random.Random(seed)
    order = {g: tie.random() for g in groups}
    share = {g: n * sizes[g] // total for g in groups}
    remainder = {g: n * sizes[g] % total for g in groups}
    left = n - sum(share.values())
    for g in sorted(groups, key=lambda g: (-remainder[g], order[g]))[:left]:
        share[g] += 1
    if n >= len(groups):
        # a group below one task takes it from the group furthest above its quota
        for g in sorted((g for g in groups if share[g] == 0), key=lambda g: order[g]):
            donor = max(
                (d for d in groups if share[d] > 1),
                key=lambda d: (share[d] * total - n * sizes[d], share[d], -order[d]),
            )
            share[donor] -= 1
            share[g] = 1
    return {g: k for g, k in share.items() if k > 0}


def stratified(ids: Sequence[str], groups: Mapping[str, str], n: int, seed: int) -> list[str]:
    """``n`` of ``ids`` spread over their ``groups`` (:func:`allocate`), each group's tasks a
    sample seeded by (``seed``, group); in ``ids``' order."""
    members: dict[str, list[str]] = {}
    for task in ids:
        members.setdefault(groups.get(task, ""), []).append(task)
    counts = allocate({g: len(m) for g, m in members.items()}, n, seed)
    keep: set[str] = set()
    for group, k in counts.items():
        rng = random.Random(derive_seed(seed, group, 0, "stratified"))
        keep.update(rng.sample(members[group], k))
    return [task for task in ids if task in keep]


def limit_ids(
    ids: Sequence[str],
    limit: int | None,
    *,
    mode: str = "stratified",
    groups: Mapping[str, str] | None = None,
    seed: int = 0,
) -> list[str]:
    """``limit`` of ``ids`` (all of them without a limit): ``stratified`` over ``groups``
    (task id -> group; one group when ``None``) with the draw seed ``seed``, or the ``first``."""
    if mode not in LIMIT_MODES:
        raise UsageError(f"unknown limit mode {mode!r}; valid choices: {', '.join(LIMIT_MODES)}")
    if limit is None:
        return list(ids)
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    if mode == "first":
        return list(ids[:limit])
    return stratified(ids, groups or {}, limit, seed)


def select_ids(
    available: Sequence[str],
    wanted: Sequence[str] | None,
    limit: int | None,
    canonical: Callable[[str], str] = str,
    *,
    noun: str = "task",
    mode: str = "stratified",
    groups: Mapping[str, str] | None = None,
    seed: int = 0,
) -> list[str]:
    """The ids of a run, in ``available``'s order: ``wanted`` (if given), then ``limit`` of
    them (:func:`limit_ids`: ``mode``, ``groups``, the draw ``seed``). ``canonical`` maps a
    user's spelling of an id to the stored one. Unknown ids are a usage error naming them
    (``unknown <noun> id(s): ...``)."""
    chosen = list(available)
    if wanted:
        known = set(available)
        asked = [canonical(w) for w in wanted]
        unknown = [w for w, a in zip(wanted, asked, strict=True) if a not in known]
        if unknown:
            listed = ", ".join(repr(u) for u in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise UsageError(f"unknown {noun} id(s): {listed}{more}")
        keep = set(asked)
        chosen = [d for d in chosen if d in keep]
    chosen = limit_ids(chosen, limit, mode=mode, groups=groups, seed=seed)
    if not chosen:
        raise UsageError(f"no {noun}s selected")
    return chosen


def selection_of(
    *,
    task_set: str | None,
    ids: Sequence[str] | None,
    limit: int | None,
    limit_mode: str,
    run_seed: int,
    n_tasks: int,
) -> Selection:
    """The :class:`Selection` a plan records: the set, the ids asked for, the limit and how it
    was drawn (when stratified, with the run seed the draw's seed derives from)."""
    mode: SelectionMode = "all"
    if limit is not None:
        mode = "first" if limit_mode == "first" else "stratified"
    elif ids:
        mode = "ids"
    return Selection(
        task_set=task_set,
        ids=list(ids) if ids else None,
        limit=limit,
        mode=mode,
        seed=run_seed if mode == "stratified" else None,
        n_tasks=n_tasks,
    )


def select_for_run(
    available: Sequence[str],
    groups: Mapping[str, str],
    settings: RunSettings,
    *,
    task_set: str | None,
    ids: Sequence[str] | None,
    canonical: Callable[[str], str] = str,
    noun: str = "task",
) -> tuple[list[str], Selection]:
    """A run's task ids (:func:`select_ids` with the config's ``limit`` and ``limit_mode``, the
    draw seeded from its ``seed``) and the :class:`Selection` its plan records."""
    chosen = select_ids(
        available,
        ids,
        settings.limit,
        canonical,
        noun=noun,
        mode=settings.limit_mode,
        groups=groups,
        seed=selection_seed(settings.seed),
    )
    return chosen, settings_selection(settings, task_set=task_set, ids=ids, n_tasks=len(chosen))


def settings_selection(
    settings: RunSettings, *, task_set: str | None, ids: Sequence[str] | None, n_tasks: int
) -> Selection:
    """:func:`selection_of` for a config's shared run settings."""
    return selection_of(
        task_set=task_set,
        ids=ids,
        limit=settings.limit,
        limit_mode=settings.limit_mode,
        run_seed=settings.seed,
        n_tasks=n_tasks,
    )


__all__ = [
    "LIMIT_MODES",
    "LimitMode",
    "allocate",
    "limit_ids",
    "select_for_run",
    "select_ids",
    "selection_of",
    "selection_seed",
    "settings_selection",
    "stratified",
]
