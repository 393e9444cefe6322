"""Build a run plan for the booking benchmark from a config."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from todeval.agents.hub import AGENT, check_agent_choice
from todeval.benchmarks.booking.game import BENCHMARK, GameRules, play_episode
from todeval.benchmarks.booking.llm_systems.prompts import load_prompts
from todeval.benchmarks.booking.players import SYSTEM, USER
from todeval.benchmarks.booking.rules import PROTOCOLS
from todeval.benchmarks.booking.tasks import (
    TASK_SETS,
    BookingTask,
    load_tasks,
    select_tasks,
    task_set_hash,
)
from todeval.core.identity import RoleIdentity, role_identity
from todeval.core.records import EpisodeRecord
from todeval.dialogue.participants import PlayerOptions, is_interactive
from todeval.dialogue.prompts import PromptSet
from todeval.errors import UsageError, choice_error
from todeval.runner.naming import run_dir_name
from todeval.runner.options import RunSettings, RuntimeOptions, model_pool, pin_prompts
from todeval.runner.plan import EpisodeJob, RunPlan
from todeval.runner.selection import selection_seed, settings_selection

__all__ = ["PROTOCOLS", "BookingConfig", "RuntimeOptions", "build_plan", "plan_from_config"]


class BookingConfig(RunSettings):
    """Everything that determines a booking run's results (hashed to guard resumes)."""

    task_set: str = "test"
    task_ids: list[str] | None = None
    protocol: str = PROTOCOLS[0]
    system: str = "rule"
    user: str = "agenda"
    system_model: str | None = None
    user_model: str | None = None
    user_transcripts: str | None = Field(
        None, description="--user replay: the run directory whose user turns are replayed"
    )
    module_model: str | None = None
    models_file: str | None = None
    models_file_sha256: str | None = None
    system_url: str | None = None
    system_channel: str | None = Field(
        None, description="--system agent: the chat endpoint's shape (None: openai-chat)"
    )
    system_timeout_s: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="--system http|agent: seconds per request (None: the system's)",
    )
    few_shot: int | None = Field(
        None, ge=0, description="hd-pipeline: retrieved examples per prompt (None: its default)"
    )
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None
    max_turns: int = Field(15, ge=1)
    max_calls_per_turn: int = Field(15, ge=1)
    on_violation: Literal["abort", "reprompt"] = "abort"

    def default_out(self) -> str:
        system = self.system if not self.system_model else f"{self.system}-{self.system_model}"
        user = self.user if not self.user_model else f"{self.user}-{self.user_model}"
        return run_dir_name(
            BENCHMARK,
            [self.task_set, system, user],
            seed=self.seed,
            constrained=self.constrained,
            limit=self.limit,
            limit_mode=self.limit_mode,
            ids=self.task_ids,
            trials=self.trials,
            protocol=None if self.protocol == PROTOCOLS[0] else self.protocol,
        )


def build_plan(
    config: BookingConfig, runtime: RuntimeOptions | None = None
) -> tuple[RunPlan, list[BookingTask]]:
    runtime = runtime or RuntimeOptions()
    if config.task_set not in TASK_SETS:
        raise choice_error("task set", config.task_set, list(TASK_SETS))
    if config.protocol not in PROTOCOLS:
        raise choice_error("protocol", config.protocol, list(PROTOCOLS))
    prompts = load_prompts(config.prompt_overrides)
    config = pin_prompts(config, prompts.digest, "booking")
    system = SYSTEM.resolve(config.system)
    user = USER.resolve(config.user)
    user.check_selection(config.task_set)
    tasks = select_tasks(
        load_tasks(config.task_set),
        config.task_ids,
        config.limit,
        mode=config.limit_mode,
        seed=selection_seed(config.seed),
    )
    models = model_pool(config.models_file, runtime, seed=config.seed)
    system_model = models.maybe(config.system_model)
    common: dict[str, Any] = {
        "constrained": config.constrained,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "prompts": prompts,
    }
    system_extra: dict[str, Any] = {"url": config.system_url} if config.system_url else {}
    if config.few_shot is not None:
        if not config.system.startswith("hd-pipeline"):
            raise UsageError("--few-shot is for --system hd-pipeline")
        system_extra["few_shot"] = config.few_shot
    if config.system_timeout_s is not None:
        if config.system not in ("http", AGENT):
            raise UsageError("--system-timeout is for --system http and --system agent")
        system_extra["timeout_s"] = config.system_timeout_s
    aclose = models.aclose
    check_agent_choice(
        "system", config.system, config.system_url, config.system_channel, url_also_for=("http",)
    )
    if config.system == AGENT:
        # one MCP tool server and one keep-alive client for every episode's agent
        from todeval.benchmarks.booking.llm_systems.agent_system import booking_hub

        if config.system_model is not None:
            raise UsageError("--system agent brings its own model: drop --system-model")
        hub = booking_hub(config.task_set)
        system_extra.update(hub.player_extra(config.system_url, config.system_channel))
        aclose = hub.closing(models.aclose)
    elif config.system == "http":
        # one keep-alive client for every episode's http system, closed with the run
        from todeval.agents.http import HttpClients

        clients = HttpClients()
        system_extra["http_clients"] = clients

        async def aclose() -> None:
            try:
                await clients.aclose()
            finally:
                await models.aclose()

    system_options = PlayerOptions(
        role="system",
        model=system_model,
        module_model=models.maybe(config.module_model) or system_model,
        extra=system_extra,
        **common,
    )
    user_extra: dict[str, Any] = {}
    if config.user == "replay":
        if config.user_transcripts is None:
            raise UsageError("--user replay needs --transcripts RUN_DIR (a recorded run)")
        from todeval.benchmarks.booking.users.replay import load_recording

        user_extra["replay"] = load_recording(config.user_transcripts)
    elif config.user_transcripts is not None:
        raise UsageError("--transcripts is for --user replay")
    user_options = PlayerOptions(
        role="user", model=models.maybe(config.user_model), extra=user_extra, **common
    )
    # Build one of each now, so a player's configuration error is reported before any episode.
    first_system = system.build(system_options)
    first_user = user.build(user_options)
    by_id = {t.task_id: t for t in tasks}
    rules = GameRules(
        max_turns=config.max_turns,
        max_calls_per_turn=config.max_calls_per_turn,
        on_violation=config.on_violation,
        protocol=config.protocol,
    )

    async def play(job: EpisodeJob) -> EpisodeRecord:
        return await play_episode(
            by_id[job.task_id],
            system.build(system_options),
            user.build(user_options),
            run_seed=config.seed,
            trial=job.trial,
            rules=rules,
        )

    jobs = [EpisodeJob(t.task_id, trial, t.group) for t in tasks for trial in range(config.trials)]
    infos = models.infos()
    players: dict[str, Any] = {"system": config.system, "user": config.user, "models": infos}
    plan = RunPlan(
        benchmark=BENCHMARK,
        config=config.model_dump(mode="json"),
        task_set_hash=task_set_hash(tasks),
        n_tasks=len(tasks),
        seed=config.seed,
        jobs=jobs,
        play=play,
        players=players,
        roles=_roles(config, infos, prompts),
        selection=settings_selection(
            config, task_set=config.task_set, ids=config.task_ids, n_tasks=len(tasks)
        ),
        protocol=config.protocol,
        success_metric="booking.booking_accuracy",
        factory="todeval.benchmarks.booking.run:plan_from_config",
        aclose=aclose,
        interactive=is_interactive(first_system) or is_interactive(first_user),
        runtime=runtime,
    )
    return plan, tasks


SYSTEM_CONFIG_KEYS = [
    "system",
    "system_model",
    "module_model",
    "system_url",
    "system_channel",
    "system_timeout_s",
    "few_shot",
]
"""The config fields that say who the system is (its role identity)."""
USER_TEMPLATES = ("user", "user_opening")
"""The templates the LLM user reads; every other template is a system's."""


def _roles(
    config: BookingConfig, infos: dict[str, Any], prompts: PromptSet
) -> dict[str, RoleIdentity]:
    """The typed identity of the two roles (prompt digests for the roles an LLM plays)."""
    system_templates = [name for name in prompts.templates if name not in USER_TEMPLATES]
    llm_system = config.system_model is not None or config.module_model is not None
    return {
        "system": role_identity(
            config.system,
            model=config.system_model,
            infos=infos,
            prompts_sha256=prompts.digest_of(system_templates) if llm_system else None,
            config_keys=SYSTEM_CONFIG_KEYS,
            privileged=SYSTEM.resolve(config.system).privileged,
        ),
        "user": role_identity(
            config.user,
            model=config.user_model,
            infos=infos,
            prompts_sha256=prompts.digest_of(USER_TEMPLATES) if config.user_model else None,
            config_keys=["user", "user_model", "user_transcripts"],
        ),
    }


def plan_from_config(config: dict[str, Any], runtime: RuntimeOptions | None = None) -> RunPlan:
    """Rebuild a plan from its recorded config (Ray workers, the Python API)."""
    return build_plan(BookingConfig.model_validate(config), runtime)[0]
