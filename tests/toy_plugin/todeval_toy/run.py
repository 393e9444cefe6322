"""A toy run from its config: the plan the runner executes (also rebuilt on Ray workers)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple
from typing import Any, Literal

from todeval_toy.game import BENCHMARK, GUESSER, HOST, PROTOCOLS, load_tasks, play_episode

from todeval.backends.pool import ModelPool
from todeval.core.identity import role_identity
from todeval.core.records import EpisodeRecord
from todeval.dialogue import EpisodeStreams, PlayerOptions, PromptSet
from todeval.runner.naming import run_dir_name
from todeval.runner.options import RunSettings, RuntimeOptions, pin_prompts
from todeval.runner.plan import EpisodeJob, RunPlan
from todeval.runner.selection import select_for_run

TASK_SET = "numbers"
"""The toy's one task set (30 tasks, 10 per range size)."""


class ToyConfig(RunSettings):
    """Everything that determines a toy run's results (hashed: a resume must match it)."""

    guesser: str = "bisect"
    host: str = "rule"
    guesser_model: str | None = None
    ids: list[str] | None = None
    protocol: Literal["standard", "strict"] = "standard"
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None

    def default_out(self) -> str:
        return run_dir_name(
            BENCHMARK,
            [
                self.guesser,
                *([self.guesser_model] if self.guesser_model else []),
                *([self.host] if self.host != "rule" else []),  # the default host is implied
            ],
            seed=self.seed,
            limit=self.limit,
            limit_mode=self.limit_mode,
            ids=self.ids,
            trials=self.trials,
            protocol=None if self.protocol == PROTOCOLS[0] else self.protocol,
        )


def build_plan(config: ToyConfig, runtime: RuntimeOptions | None = None) -> RunPlan:
    runtime = runtime or RuntimeOptions()
    prompts = PromptSet.load("todeval_toy", config.prompt_overrides)
    config = pin_prompts(config, prompts.digest, "toy")
    guesser, host = GUESSER.resolve(config.guesser), HOST.resolve(config.host)
    tasks = {t.task_id: t for t in load_tasks()}
    groups = {t.task_id: t.group for t in tasks.values()}  # the range size: n10, n100, n1000
    ids, selection = select_for_run(list(tasks), groups, config, task_set=TASK_SET, ids=config.ids)
    chosen = [tasks[i] for i in ids]
    models = ModelPool(None, cache=runtime.cache, cache_path=runtime.cache_path,
                       retry=runtime.retry, script=runtime.script, seed=config.seed)  # fmt: skip
    options = PlayerOptions(
        role="guesser",
        model=models.maybe(config.guesser_model),
        constrained=config.constrained,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        prompts=prompts,
    )
    guesser.build(options)  # a configuration error shows now, before any episode
    host.build(PlayerOptions(role="host"))

    async def play(job: EpisodeJob) -> EpisodeRecord:
        streams = EpisodeStreams(config.seed, job.task_id, job.trial)
        return await play_episode(
            tasks[job.task_id],
            guesser.build(options),
            host.build(PlayerOptions(role="host")),
            streams,
            config.protocol,
        )

    return RunPlan(
        benchmark=BENCHMARK,
        config=config.model_dump(mode="json"),
        task_set_hash=hashlib.sha256(json.dumps([astuple(t) for t in chosen]).encode()).hexdigest(),
        n_tasks=len(chosen),
        seed=config.seed,
        jobs=[EpisodeJob(t.task_id, k, t.group) for t in chosen for k in range(config.trials)],
        play=play,
        players={"guesser": config.guesser, "host": config.host, "models": models.infos()},
        roles={
            "guesser": role_identity(
                config.guesser,
                model=config.guesser_model,
                infos=models.infos(),
                prompts_sha256=prompts.digest if config.guesser_model else None,
                config_keys=["guesser", "guesser_model"],
                privileged=guesser.privileged,
            ),
            "host": role_identity(config.host, config_keys=["host"]),
        },
        selection=selection,
        protocol=config.protocol,
        factory="todeval_toy.run:plan_from_config",
        aclose=models.aclose,
        success_metric="toy.success",
        interactive=getattr(guesser.cls, "interactive", False),
    )


def plan_from_config(config: dict[str, Any], runtime: RuntimeOptions | None = None) -> RunPlan:
    """The plan of a recorded config (Ray workers, the Python API)."""
    return build_plan(ToyConfig.model_validate(config), runtime)
