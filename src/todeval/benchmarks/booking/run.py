"""Build a run plan for the booking benchmark from a config."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from todeval.benchmarks.booking.game import BENCHMARK, GameRules, play_episode
from todeval.benchmarks.booking.players import system_class, user_class
from todeval.benchmarks.booking.protocol import PlayerOptions, build_player
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

if TYPE_CHECKING:
    from todeval.backends.types import Backend


class BookingConfig(BaseModel):
    """Everything that determines a booking run's results (hashed to guard resumes)."""

    task_set: str = "test"
    task_ids: list[str] | None = None
    limit: int | None = None
    system: str = "rule"
    user: str = "agenda"
    system_model: str | None = None
    user_model: str | None = None
    module_model: str | None = None
    models_file: str | None = None
    models_file_sha256: str | None = None
    system_url: str | None = None
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int = 0
    trials: int = Field(1, ge=1)
    max_turns: int = Field(15, ge=1)
    max_calls_per_turn: int = Field(15, ge=1)
    on_violation: Literal["abort", "reprompt"] = "abort"

    def default_out(self) -> str:
        system = self.system if not self.system_model else f"{self.system}-{self.system_model}"
        user = self.user if not self.user_model else f"{self.user}-{self.user_model}"
        name = f"runs/{BENCHMARK}-{self.task_set}-{_slug(system)}-{_slug(user)}-s{self.seed}"
        if self.constrained:
            name += "-constrained"
        if self.limit is not None:
            name += f"-n{self.limit}"
        if self.task_ids:
            digest = hashlib.sha256(",".join(sorted(self.task_ids)).encode()).hexdigest()[:8]
            name += f"-ids{digest}"
        if self.trials > 1:
            name += f"-k{self.trials}"
        return name


@dataclass(frozen=True)
class RuntimeOptions:
    """Options that change how a run executes, never its results (not hashed)."""

    cache: bool = True
    cache_path: str | None = None
    retry: Any = None  # a todeval.backends.RetryPolicy (default: the model layer's)


def _slug(name: str) -> str:
    name = name.split("@", 1)[0]  # keep URLs out of directory names
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


class _Backends:
    """The run's model backends, shared by all its episodes (one cache, one limiter pool)."""

    def __init__(self, config: BookingConfig, runtime: RuntimeOptions) -> None:
        self.config = config
        self.runtime = runtime
        self.built: dict[str, Backend] = {}
        self._cache: Any = None
        self._limiters: Any = None

    def get(self, spec: str | None) -> Backend | None:
        if spec is None:
            return None
        if spec not in self.built:
            from todeval.backends import (
                LimiterPool,
                ResponseCache,
                default_cache_path,
                make_backend,
            )

            if self._limiters is None:
                self._limiters = LimiterPool()
                if self.runtime.cache:
                    self._cache = ResponseCache(self.runtime.cache_path or default_cache_path())
            self.built[spec] = make_backend(
                spec,
                self.config.models_file,
                cache=self._cache,
                limiters=self._limiters,
                retry=self.runtime.retry,
                seed=self.config.seed,
            )
        return self.built[spec]

    def infos(self) -> dict[str, Any]:
        return {spec: b.info.model_dump(mode="json") for spec, b in self.built.items()}

    async def aclose(self) -> None:
        for backend in self.built.values():
            await backend.aclose()
        if self._cache is not None:
            self._cache.close()


def build_plan(
    config: BookingConfig, runtime: RuntimeOptions | None = None
) -> tuple[RunPlan, list[BookingTask]]:
    runtime = runtime or RuntimeOptions()
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
    backends = _Backends(config, runtime)
    system_model = backends.get(config.system_model)
    common = {
        "constrained": config.constrained,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
    }
    system_options = PlayerOptions(
        role="system",
        model=system_model,
        module_model=backends.get(config.module_model) or system_model,
        extra={"url": config.system_url} if config.system_url else {},
        **common,  # type: ignore[arg-type]
    )
    user_options = PlayerOptions(role="user", model=backends.get(config.user_model), **common)  # type: ignore[arg-type]
    # Build one of each now, so a player's configuration error is reported before any episode.
    build_player(system_cls, system_options)
    build_player(user_cls, user_options)
    by_id = {t.task_id: t for t in tasks}
    rules = GameRules(
        max_turns=config.max_turns,
        max_calls_per_turn=config.max_calls_per_turn,
        on_violation=config.on_violation,
    )

    async def play(job: EpisodeJob) -> EpisodeRecord:
        return await play_episode(
            by_id[job.task_id],
            build_player(system_cls, system_options),
            build_player(user_cls, user_options),
            run_seed=config.seed,
            trial=job.trial,
            rules=rules,
        )

    jobs = [EpisodeJob(t.task_id, trial, t.group) for t in tasks for trial in range(config.trials)]
    players: dict[str, Any] = {
        "system": config.system,
        "user": config.user,
        "models": backends.infos(),
    }
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
        aclose=backends.aclose,
    )
    return plan, tasks


def plan_from_config(config: dict[str, Any]) -> RunPlan:
    """Rebuild a plan from its recorded config (used by Ray workers)."""
    return build_plan(BookingConfig.model_validate(config))[0]
