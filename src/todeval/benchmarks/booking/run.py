"""Build a run plan for the booking benchmark from a config."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, Field

from todeval.benchmarks.booking.game import BENCHMARK, GameRules, play_episode
from todeval.benchmarks.booking.players import system_class, user_class
from todeval.benchmarks.booking.tasks import (
    TASK_SETS,
    BookingTask,
    load_tasks,
    select_tasks,
    task_set_hash,
)
from todeval.core.records import EpisodeRecord
from todeval.errors import UsageError, choice_error
from todeval.runner.execute import EpisodeJob, RunPlan


class BookingConfig(BaseModel):
    """Everything that determines a booking run's results (hashed to guard resumes)."""

    task_set: str = "test"
    task_ids: list[str] | None = None
    limit: int | None = None
    system: str = "rule"
    user: str = "agenda"
    seed: int = 0
    trials: int = Field(1, ge=1)
    max_turns: int = Field(15, ge=1)
    max_calls_per_turn: int = Field(15, ge=1)
    on_violation: Literal["abort", "reprompt"] = "abort"

    def default_out(self) -> str:
        name = (
            f"runs/{BENCHMARK}-{self.task_set}-{_slug(self.system)}-{_slug(self.user)}-s{self.seed}"
        )
        if self.limit is not None:
            name += f"-n{self.limit}"
        if self.task_ids:
            digest = hashlib.sha256(",".join(sorted(self.task_ids)).encode()).hexdigest()[:8]
            name += f"-ids{digest}"
        if self.trials > 1:
            name += f"-k{self.trials}"
        return name


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def build_plan(config: BookingConfig) -> tuple[RunPlan, list[BookingTask]]:
    if config.task_set not in TASK_SETS:
        raise choice_error("task set", config.task_set, list(TASK_SETS))
    system_cls = system_class(config.system)
    user_cls = user_class(config.user)
    check = getattr(user_cls, "check_task_set", None)
    if callable(check):
        check(config.task_set)
    tasks = select_tasks(load_tasks(config.task_set), config.task_ids, config.limit)
    if not tasks:
        raise UsageError("no tasks selected")
    by_id = {t.task_id: t for t in tasks}
    rules = GameRules(
        max_turns=config.max_turns,
        max_calls_per_turn=config.max_calls_per_turn,
        on_violation=config.on_violation,
    )

    async def play(job: EpisodeJob) -> EpisodeRecord:
        return await play_episode(
            by_id[job.task_id],
            system_cls(),
            user_cls(),
            run_seed=config.seed,
            trial=job.trial,
            rules=rules,
        )

    jobs = [EpisodeJob(t.task_id, trial, t.group) for t in tasks for trial in range(config.trials)]
    players: dict[str, Any] = {"system": config.system, "user": config.user}
    plan = RunPlan(
        benchmark=BENCHMARK,
        config=config.model_dump(mode="json"),
        task_set_hash=task_set_hash(tasks),
        n_tasks=len(tasks),
        seed=config.seed,
        jobs=jobs,
        play=play,
        players=players,
        success_metric="booking.booking_accuracy",
        factory="todeval.benchmarks.booking.run:plan_from_config",
    )
    return plan, tasks


def plan_from_config(config: dict[str, Any]) -> RunPlan:
    """Rebuild a plan from its recorded config (used by Ray workers)."""
    return build_plan(BookingConfig.model_validate(config))[0]
