"""``--limit N`` draws stratified over the task groups by default; ``--limit-mode first`` takes
the first N (0.1.0's rule). Both are recorded in the config (hashed) and the manifest's
selection."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from todeval.benchmarks.booking.run import SPEC, BookingConfig
from todeval.benchmarks.booking.tasks import BookingTask, load_tasks, select_tasks
from todeval.cli import main
from todeval.errors import UsageError
from todeval.runner.naming import run_dir_name
from todeval.runner.plan import RunPlan
from todeval.runner.selection import (
    allocate,
    limit_ids,
    select_ids,
    selection_of,
    selection_seed,
)


def build_plan(config: BookingConfig) -> tuple[RunPlan, list[BookingTask]]:
    """The booking plan of ``config`` and its tasks, in job order (one trial)."""
    plan = SPEC.plan(config)
    by_id = {t.task_id: t for t in load_tasks(config.task_set)}
    return plan, [by_id[j.task_id] for j in plan.jobs if j.trial == 0]


# 100 tasks in three groups of 50, 30 and 20, interleaved so that the first N are not a
# stratified sample
IDS = [f"t{i:03d}" for i in range(100)]
GROUPS = {t: ("a" if i % 10 < 5 else "b" if i % 10 < 8 else "c") for i, t in enumerate(IDS)}
SKEWED = {**{f"big{i:03d}": "big" for i in range(100)}, "one": "x", "two": "y"}


def _counts(ids: list[str], groups: dict[str, str]) -> Counter[str]:
    return Counter(groups[i] for i in ids)


def test_allocation_is_proportional_by_largest_remainders() -> None:
    assert allocate({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    # quotas 5.5, 3.3, 2.2: floors 5, 3, 2 and the one left to the largest remainder
    assert allocate({"a": 50, "b": 30, "c": 20}, 11) == {"a": 6, "b": 3, "c": 2}
    # booking's test set: 20 per group but one of 17; 12 tasks give two per group
    sizes = {"g1": 20, "g2": 20, "g3": 20, "g4": 20, "g5": 20, "g6": 17}
    assert allocate(sizes, 12) == dict.fromkeys(sizes, 2)
    assert sum(allocate(sizes, 50).values()) == 50
    assert allocate({"a": 3, "b": 2}, 10) == {"a": 3, "b": 2}  # more than there are: all


def test_every_group_gets_one_while_the_limit_allows() -> None:
    # quotas 4.9, 0.05, 0.05 would give the small groups nothing
    assert allocate({"big": 100, "x": 1, "y": 1}, 5) == {"big": 3, "x": 1, "y": 1}
    assert allocate({"big": 100, "x": 1, "y": 1}, 3) == {"big": 1, "x": 1, "y": 1}
    # fewer tasks than groups: equal remainders are broken by the seed, never more than n
    picks = {frozenset(allocate({"a": 10, "b": 10, "c": 10}, 2, seed=s)) for s in range(20)}
    assert all(len(p) == 2 for p in picks) and len(picks) > 1


def test_stratified_picks_cover_every_group_proportionally_in_the_sets_order() -> None:
    chosen = select_ids(IDS, None, 10, groups=GROUPS, seed=selection_seed(0))
    assert _counts(chosen, GROUPS) == {"a": 5, "b": 3, "c": 2}
    assert chosen == [t for t in IDS if t in set(chosen)]  # the set's original order
    skewed = select_ids(list(SKEWED), None, 4, groups=SKEWED, seed=selection_seed(0))
    assert _counts(skewed, SKEWED) == {"big": 2, "x": 1, "y": 1}


def test_stratified_picks_are_reproducible_for_a_seed_and_differ_from_the_first() -> None:
    draw = [select_ids(IDS, None, 10, groups=GROUPS, seed=selection_seed(s)) for s in (0, 0, 1)]
    assert draw[0] == draw[1] and draw[0] != draw[2]
    first = select_ids(IDS, None, 10, mode="first", groups=GROUPS, seed=selection_seed(0))
    assert first == IDS[:10] and draw[0] != first
    # ids, then the limit; unknown mode and bad limits are usage errors
    wanted = IDS[40:60]
    some = select_ids(IDS, wanted, 5, groups=GROUPS, seed=1)
    assert set(some) <= set(wanted) and len(some) == 5
    with pytest.raises(UsageError, match="unknown limit mode 'random'"):
        limit_ids(IDS, 3, mode="random")
    with pytest.raises(UsageError, match="at least 1"):
        limit_ids(IDS, 0)
    assert limit_ids(IDS, None, groups=GROUPS) == IDS


def test_booking_limit_is_stratified_over_domain_groups_and_first_reproduces_0_1_0() -> None:
    tasks = load_tasks("test")
    plan, chosen = build_plan(BookingConfig(limit=12))
    assert Counter(t.group for t in chosen) == dict.fromkeys({t.group for t in tasks}, 2)
    assert plan.selection is not None
    assert (plan.selection.mode, plan.selection.limit, plan.selection.seed) == ("stratified", 12, 0)
    assert plan.selection.task_set == "test" and plan.selection.n_tasks == 12
    plan_first, first = build_plan(BookingConfig(limit=12, limit_mode="first"))
    assert [t.task_id for t in first] == [t.task_id for t in tasks[:12]]  # the old selection
    assert [t.task_id for t in select_tasks(tasks, limit=12, mode="first")] == [
        t.task_id for t in first
    ]
    assert Counter(t.group for t in first) == {"hotel": 12}  # why first-N misleads
    assert plan_first.selection is not None and plan_first.selection.mode == "first"
    assert plan_first.selection.seed is None
    assert plan.config["limit_mode"] == "stratified" and plan.config_hash != plan_first.config_hash
    # another run seed draws other tasks
    _, other = build_plan(BookingConfig(limit=12, seed=1))
    assert [t.task_id for t in other] != [t.task_id for t in chosen]


def test_selection_records_mode_and_seed() -> None:
    common = {"task_set": "test", "ids": None, "run_seed": 3, "n_tasks": 5}
    assert selection_of(limit=5, limit_mode="stratified", **common).seed == 3
    assert selection_of(limit=5, limit_mode="first", **common).mode == "first"
    assert selection_of(limit=None, limit_mode="first", **common).mode == "all"
    with_ids = selection_of(**{**common, "ids": ["a", "b"]}, limit=None, limit_mode="first")
    assert (with_ids.mode, with_ids.ids, with_ids.seed) == ("ids", ["a", "b"], None)


def test_default_out_names_differ_between_first_and_stratified_limits() -> None:
    stratified = run_dir_name("b", ["x"], seed=0, limit=20)
    first = run_dir_name("b", ["x"], seed=0, limit=20, limit_mode="first")
    assert (stratified, first) == ("runs/b-x-s0-n20", "runs/b-x-s0-n20-first")
    assert BookingConfig(limit=5, limit_mode="first").default_out().endswith("-n5-first")
    assert BookingConfig(limit=5).default_out().endswith("-n5")
    assert run_dir_name("b", ["x"], seed=0, limit_mode="first") == "runs/b-x-s0"


def test_limit_mode_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "first"
    argv = ["run", "booking", "--limit", "3", "--limit-mode", "first", "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["limit_mode"] == "first"
    assert manifest["selection"] == {
        "task_set": "test", "ids": None, "limit": 3, "mode": "first", "seed": None, "n_tasks": 3,
    }  # fmt: skip
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["run", "booking", "--limit", "3", "--limit-mode", "random", "--quiet"])
    assert exc.value.code == 2
    assert "--limit-mode" in capsys.readouterr().err
