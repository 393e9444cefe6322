"""Build a run plan for the booking benchmark from a config."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from todeval.agents.hub import AGENT, AgentHub
from todeval.benchmarks.booking.game import BENCHMARK, GameRules, play_episode
from todeval.benchmarks.booking.llm_systems.prompts import PACKAGE as PROMPTS_PACKAGE
from todeval.benchmarks.booking.llm_systems.prompts import world_prompts
from todeval.benchmarks.booking.players import SYSTEM, USER
from todeval.benchmarks.booking.profile import PROFILE
from todeval.benchmarks.booking.replay import REPLAY
from todeval.benchmarks.booking.rescoring import SCORER_VERSION, rescore
from todeval.benchmarks.booking.rules import PROTOCOLS
from todeval.benchmarks.booking.tasks import (
    TASK_SETS,
    BookingTask,
    load_tasks,
)
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core.records import EpisodeRecord
from todeval.dialogue.prompts import PromptSet
from todeval.errors import RefusedError, UsageError, choice_error
from todeval.runner.naming import run_dir_name
from todeval.runner.options import RunSettings, RuntimeOptions
from todeval.spec import AgentSeat, BenchmarkSpec, Episode, RoleSpec, RunContext, Tasks

__all__ = ["PROTOCOLS", "SPEC", "BookingConfig", "RuntimeOptions"]


class BookingConfig(RunSettings):
    """Everything that determines a booking run's results (hashed to guard resumes)."""

    task_set: str = "test"
    domain: str | None = Field(
        None, description="--domain: a domain pack (a shipped pack's name or a folder)"
    )
    domain_tasks: str | None = Field(
        None, description="--domain-tasks: its task file (None: the pack's tasks.json)"
    )
    domain_sha256: str | None = Field(
        None, description="digest of the pack's schema and data (a resume notices edits)"
    )
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
        tasks = self.task_set if self.domain is None else Path(self.domain).name
        return run_dir_name(
            BENCHMARK,
            [tasks, system, user],
            seed=self.seed,
            constrained=self.constrained,
            limit=self.limit,
            limit_mode=self.limit_mode,
            ids=self.task_ids,
            trials=self.trials,
            protocol=None if self.protocol == PROTOCOLS[0] else self.protocol,
        )


def world_key(config: BookingConfig) -> str:
    """The task set a run's tasks carry: a built-in set, or ``pack:<folder>``."""
    if config.domain is None:
        return config.task_set
    from todeval.benchmarks.booking.domains.cli import pack_folder
    from todeval.benchmarks.booking.world.model import pack_task_set

    return pack_task_set(pack_folder(config.domain))


def task_set_name(config: BookingConfig) -> str:
    """The task set as a run's selection names it: a built-in set (``test``), or a domain
    pack's name, its task file and the pack's digest (``car-rental/tasks@1a2b3c4d``), so boards,
    ``view`` and ``compare`` keep packs apart from MultiWOZ and from each other."""
    if config.domain is None:
        return config.task_set
    tasks = Path(config.domain_tasks).stem if config.domain_tasks else "tasks"
    digest = (config.domain_sha256 or "")[:8]
    return f"{Path(config.domain).name}/{tasks}" + (f"@{digest}" if digest else "")


def run_tasks(config: BookingConfig) -> list[BookingTask]:
    """The tasks a run plays: a built-in set (under ``clemtodd`` its values as the original
    reads them), or a domain pack's task file."""
    if config.domain is None:
        return load_tasks(config.task_set, as_given=config.protocol == "clemtodd")
    from todeval.benchmarks.booking.domains.cli import pack_folder
    from todeval.benchmarks.booking.domains.tasks import load_pack_tasks

    return load_pack_tasks(pack_folder(config.domain), config.domain_tasks)


def _check_domain(config: BookingConfig) -> BookingConfig:
    """The config with its pack's digest; a pack edited since the run began is refused."""
    if config.domain is None:
        if config.domain_tasks is not None:
            raise UsageError("--domain-tasks is for --domain PACK")
        return config
    from todeval.benchmarks.booking.domains.cli import pack_folder
    from todeval.benchmarks.booking.domains.pack import cached_pack
    from todeval.benchmarks.booking.domains.tasks import pack_digest

    digest = pack_digest(cached_pack(str(pack_folder(config.domain))))[:16]
    if config.domain_sha256 not in (None, digest):
        raise RefusedError(
            f"{config.domain}: the pack changed since the run began (digest "
            f"{config.domain_sha256} -> {digest}); use another --out directory"
        )
    return config.model_copy(update={"domain_sha256": digest})


def _check(config: BookingConfig) -> BookingConfig:
    if config.domain is None and config.task_set not in TASK_SETS:
        raise choice_error("task set", config.task_set, list(TASK_SETS))
    config = _check_domain(config)
    if config.few_shot is not None and not config.system.startswith("hd-pipeline"):
        raise UsageError("--few-shot is for --system hd-pipeline")
    if config.system_timeout_s is not None and config.system not in ("http", AGENT):
        raise UsageError("--system-timeout is for --system http and --system agent")
    if config.system == AGENT and config.system_model is not None:
        raise UsageError("--system agent brings its own model: drop --system-model")
    if config.user == "replay" and config.user_transcripts is None:
        raise UsageError("--user replay needs --transcripts RUN_DIR (a recorded run)")
    if config.user != "replay" and config.user_transcripts is not None:
        raise UsageError("--transcripts is for --user replay")
    return config


def _canonical(config: BookingConfig, tasks: Sequence[BookingTask]) -> Callable[[str], str]:
    """A task by its full id, the part after the set name or its file's stem (any case)."""
    names: dict[str, str] = {}
    for t in tasks:
        for name in (t.task_id, t.task_id.split("/", 1)[1], t.filename.rsplit(".", 1)[0]):
            names.setdefault(name.lower(), t.task_id)
    return lambda asked: names.get(asked.lower(), asked)


def _prepare(run: RunContext[BookingConfig, BookingTask]) -> GameRules:
    config = run.config
    return GameRules(
        max_turns=config.max_turns,
        max_calls_per_turn=config.max_calls_per_turn,
        on_violation=config.on_violation,
        protocol=config.protocol,
    )


def _system_options(run: RunContext[BookingConfig, BookingTask]) -> dict[str, Any]:
    config = run.config
    extra: dict[str, Any] = {"url": config.system_url} if config.system_url else {}
    if config.few_shot is not None:
        extra["few_shot"] = config.few_shot
    if config.system_timeout_s is not None:
        extra["timeout_s"] = config.system_timeout_s
    if config.system == "http":
        # one keep-alive client for every episode's http system, closed with the run
        from todeval.agents.http import HttpClients

        clients = HttpClients()
        run.closers.append(clients.aclose)
        extra["http_clients"] = clients
    model = run.models.maybe(config.system_model)
    return {"extra": extra, "module_model": run.models.maybe(config.module_model) or model}


def _user_options(run: RunContext[BookingConfig, BookingTask]) -> dict[str, Any]:
    if run.config.user != "replay" or run.config.user_transcripts is None:
        return {}
    from todeval.benchmarks.booking.users.replay import load_recording

    return {"extra": {"replay": load_recording(run.config.user_transcripts)}}


def _agent_hub(config: BookingConfig) -> AgentHub:
    # one MCP tool server and one keep-alive client for every episode's agent
    from todeval.benchmarks.booking.llm_systems.agent_system import booking_hub

    return booking_hub(world_key(config))


async def _episode(ep: Episode[BookingConfig, BookingTask]) -> EpisodeRecord:
    return await play_episode(
        ep.task,
        ep.players["system"],
        ep.players["user"],
        run_seed=ep.config.seed,
        trial=ep.trial,
        rules=ep.run.shared,
    )


SYSTEM_IDENTITY = ("module_model", "system_url", "system_channel", "system_timeout_s", "few_shot")
"""Config fields besides ``system`` and ``system_model`` that say who the system is."""
USER_TEMPLATES = ("user", "user_opening")
"""The templates the LLM user reads; every other template is a system's."""


def _prompt_defaults(config: BookingConfig) -> dict[str, str] | None:
    """A domain pack's wording of the templates (MultiWOZ's sets: the package's)."""
    return world_prompts(world_of(world_key(config)))


def _system_templates(config: BookingConfig, prompts: PromptSet) -> list[str]:
    return [name for name in prompts.templates if name not in USER_TEMPLATES]


SPEC: BenchmarkSpec[BookingConfig, BookingTask] = BenchmarkSpec(
    name=BENCHMARK,
    reference="todeval.benchmarks.booking.run:SPEC",
    reviewer=PROFILE.reviewer,
    config=BookingConfig,
    tasks=Tasks(
        load=run_tasks,
        ids=lambda config: config.task_ids,
        canonical=_canonical,
        set_name=lambda config: task_set_name(config),
    ),
    roles=(
        RoleSpec(
            "system",
            SYSTEM,
            player_key="system",
            model_key="system_model",
            identity_keys=SYSTEM_IDENTITY,
            templates=_system_templates,
            reads_prompts=lambda c: c.system_model is not None or c.module_model is not None,
            options=_system_options,
            agent=AgentSeat("system_url", "system_channel", hub=_agent_hub, url_also_for=("http",)),
        ),
        RoleSpec(
            "user",
            USER,
            player_key="user",
            model_key="user_model",
            identity_keys=("user_transcripts",),
            templates=lambda config, prompts: USER_TEMPLATES,
            options=_user_options,
        ),
    ),
    episode=_episode,
    prompts=PROMPTS_PACKAGE,
    prompt_defaults=_prompt_defaults,
    protocols=PROTOCOLS,
    check=lambda config: _check(config),
    prepare=_prepare,
    success_metric="booking.booking_accuracy",
    scorer_version=SCORER_VERSION,
    rescore=rescore,
    replay=REPLAY,
)
"""The self-play booking benchmark, declared (its profile is registered apart)."""
