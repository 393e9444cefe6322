"""The one plan builder: a benchmark's spec and a config -> the plan the runner executes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from todeval.core.identity import RoleIdentity, role_identity
from todeval.core.imports import is_reference
from todeval.core.records import EpisodeRecord, Summary
from todeval.dialogue.episode import EpisodeStreams
from todeval.dialogue.isolation import (
    CHANNEL_BUILTIN,
    CHANNEL_ENDPOINT,
    CHANNEL_IN_PROCESS,
    CHANNEL_ISOLATED,
    IsolatedFactory,
    IsolationOptions,
    isolated_factory,
)
from todeval.dialogue.participants import (
    PlayerFactory,
    PlayerOptions,
    is_interactive,
    split_params,
)
from todeval.dialogue.prompts import PromptSet
from todeval.errors import choice_error
from todeval.runner.options import RunSettings, RuntimeOptions, model_pool, pin_prompts
from todeval.runner.plan import EpisodeJob, RunPlan
from todeval.runner.selection import select_for_run
from todeval.spec.declare import Episode, Rescore, RoleSpec, RunContext, Tasks

if TYPE_CHECKING:
    from todeval.results.profile import BenchmarkProfile
    from todeval.submission.replay import Replay
    from todeval.validation.controls import Control
    from todeval.validation.search import AdversaryFamily

C = TypeVar("C", bound=RunSettings)
T = TypeVar("T")

GENERATION_FIELDS = ("constrained", "temperature", "max_tokens")
"""Config fields every player's options take when the config has them."""


@dataclass(frozen=True)
class BenchmarkSpec(Generic[C, T]):
    """A benchmark, declared. ``name`` is what ``todeval run NAME`` takes; ``reference`` the
    ``module:NAME`` this spec is importable as (Ray workers and the Python API rebuild plans
    from it)."""

    name: str
    reference: str
    config: type[C]
    tasks: Tasks[C, T]
    roles: tuple[RoleSpec[C], ...]
    episode: Callable[[Episode[C, T]], Awaitable[EpisodeRecord]]
    profile: BenchmarkProfile | None = None
    """How its results are shown (a benchmark whose profile is registered on its own, to keep
    report imports light, leaves it out)."""
    controls: Sequence[Control] = ()
    """Its floor and ceiling controls (``todeval validate NAME``)."""
    adversaries: Sequence[AdversaryFamily] = ()
    """Its families of skill-less agents, searched by ``todeval validate NAME`` for the best
    (:mod:`todeval.validation.search`)."""
    prompts: str | None = None
    """The package whose ``prompts/`` folder holds the templates (``None``: no templates)."""
    prompt_defaults: Callable[[C], Mapping[str, str] | None] | None = None
    """The config's own wording of some default templates, by name (a world's, say), in place
    of the package's; ``--prompts DIR`` overrides them like any default. ``None``: the
    package's."""
    pinned_templates: Callable[[C, PromptSet], Sequence[str]] | None = None
    """The templates whose digest guards a resume (default: all)."""
    protocols: tuple[str, ...] = ()
    """The protocols the config's ``protocol`` may name (checked before anything is built)."""
    check: Callable[[C], C | None] | None = None
    """Config checks beyond the model's (usage errors); may return an updated config."""
    prepare: Callable[[RunContext[C, T]], Any] | None = None
    """Run-wide objects (rules, judges, fitted baselines), kept as ``RunContext.shared``."""
    finalize: Callable[[RunContext[C, T], list[EpisodeRecord]], Summary] | None = None
    """The run's summary from its records (default: the runner's summary)."""
    success_metric: str | None = None
    """The metric pass^k counts as success (default: the profile's ``success_metric``)."""
    reviewer: str | None = None
    """``"module:attr"`` of its :class:`todeval.review.Reviewer` (default: the profile's): each
    failed episode is written with who failed."""
    step_reward: Callable[[T, Any, Any], float] | None = None
    """A per-step signal where the benchmark has one: the reward of the role's output to one
    observation of a task (Gymnasium environments with ``step_rewards=True``, :mod:`todeval.gym`;
    bargaining: the turn's F1)."""

    scorer_version: str = "1"
    """The version of the benchmark's scoring: bump it with any change that can change a stored
    episode's metrics or labels (every record and summary carries it; ``compare``, ``report``
    and ``view`` refuse runs of different versions side by side until ``todeval rescore``
    re-grades the older one). The golden episodes in ``tests/rescore`` catch a change left
    unversioned."""
    rescore: Rescore[C, T] | None = None
    """How a stored episode is scored again from its events (``todeval rescore``,
    :mod:`todeval.results.rescore`); ``None``: this benchmark's runs cannot be re-graded."""
    scoring_prepare: Callable[[RunContext[C, T]], Any] | None = None
    """What ``rescore`` and ``finalize`` need run-wide when a stored run is re-graded, kept as
    ``RunContext.shared`` (default: ``prepare``; a benchmark whose ``prepare`` builds what
    re-grading must not need, such as the model under test, declares its own)."""
    replay: Replay[C, T] | None = None
    """How ``todeval submit verify`` replays its recorded episodes against the world they claim
    (:mod:`todeval.submission.replay`); ``None``: trajectories are taken as recorded."""

    def plan(self, config: Mapping[str, Any] | C, runtime: RuntimeOptions | None = None) -> RunPlan:
        """The run plan of ``config`` (see :func:`build_plan`)."""
        return build_plan(self, config, runtime)


def task_content(task: Any) -> Any:
    """A task's JSON-able content: a pydantic model's fields, a dataclass's, or the object."""
    if isinstance(task, BaseModel):
        return task.model_dump(mode="json")
    if dataclasses.is_dataclass(task) and not isinstance(task, type):
        return dataclasses.asdict(task)
    return task


def task_set_hash(contents: Iterable[Any]) -> str:
    """The task-set hash of every benchmark: SHA-256 of one compact JSON line per task (keys in
    their own order, text unescaped), the first 16 hex digits."""
    h = hashlib.sha256()
    for content in contents:
        line = json.dumps(content, separators=(",", ":"), ensure_ascii=False)
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _config(spec: BenchmarkSpec[C, T], config: Mapping[str, Any] | C) -> C:
    if isinstance(config, spec.config):
        return config
    return spec.config.model_validate(config)


def _options(role: RoleSpec[C], context: RunContext[C, T], hubs: list[Any]) -> PlayerOptions:
    config = context.config
    fields: dict[str, Any] = {
        name: getattr(config, name) for name in GENERATION_FIELDS if hasattr(config, name)
    }
    fields["prompts"] = context.prompts
    fields["model"] = context.models.maybe(role.model_of(config))
    extra: dict[str, Any] = {}
    if role.options is not None:
        more = dict(role.options(context))
        extra.update(more.pop("extra", {}))
        fields.update(more)
    if role.agent is not None:
        from todeval.agents.hub import AGENT, AgentHub, check_agent_choice

        seat = role.agent
        player = role.chosen(config)
        url = getattr(config, seat.url_key)
        channel = getattr(config, seat.channel_key)
        check_agent_choice(role.name, player, url, channel, url_also_for=seat.url_also_for)
        if player == AGENT:
            hub = seat.hub(config) if seat.hub is not None else AgentHub()
            hubs.append(hub)
            context.closers.append(hub.aclose)
            extra.update(hub.player_extra(url, channel))
    return PlayerOptions(role=role.name, extra=extra, **fields)


def _identity(
    role: RoleSpec[C],
    config: C,
    prompts: PromptSet | None,
    infos: Mapping[str, Any],
    factory: PlayerFactory[Any] | IsolatedFactory | None,
    isolated: bool = False,
) -> RoleIdentity:
    model = role.model_of(config)
    reads = role.reads_prompts(config) if role.reads_prompts is not None else model is not None
    digest = None
    if prompts is not None and reads:
        names = role.templates(config, prompts) if role.templates is not None else None
        digest = prompts.digest_of(list(names)) if names is not None else prompts.digest
    seat = (role.agent.url_key, role.agent.channel_key) if role.agent is not None else ()
    keys = list(
        dict.fromkeys(k for k in (role.player_key, role.model_key, *role.identity_keys, *seat) if k)
    )
    return role_identity(
        role.player_name(config),
        model=model,
        infos=infos,
        prompts_sha256=digest,
        config_keys=keys,
        privileged=factory.privileged if factory is not None else False,
        channel=_channel(role, config, isolated),
    )


def _channel(role: RoleSpec[C], config: C, isolated: bool) -> str | None:
    """How the role's player ran (:data:`~todeval.dialogue.isolation.CHANNELS`)."""
    if role.role is None:
        return None
    if isolated:
        return CHANNEL_ISOLATED
    chosen = split_params(role.chosen(config))[0]
    if role.agent is not None and chosen == "agent":
        return CHANNEL_ENDPOINT
    return CHANNEL_IN_PROCESS if is_reference(chosen) else CHANNEL_BUILTIN


def _isolated_roles(roles: Sequence[RoleSpec[C]], config: C, runtime: RuntimeOptions) -> set[str]:
    """The roles ``--isolate`` puts in the sandbox: those played by a ``package.module:Class``."""
    if not runtime.isolate:
        return set()
    chosen = {r.name: split_params(r.chosen(config))[0] for r in roles if r.role is not None}
    return {
        r.name
        for r in roles
        if r.role is not None
        and is_reference(chosen[r.name])
        and chosen[r.name] not in r.role.builtins
    }


def _hidden_from_sandbox(runtime: RuntimeOptions) -> list[Path]:
    """Folders the sandbox must not see besides the package data: the run directory and the
    response cache's folder (the installation's secrets live there)."""
    from todeval.backends.cache import default_cache_path

    hidden = [default_cache_path().parent]
    if runtime.cache_path:
        hidden.append(Path(runtime.cache_path).parent)
    if runtime.out is not None:
        hidden.append(Path(runtime.out))
    return hidden


def build_plan(
    spec: BenchmarkSpec[C, T],
    config: Mapping[str, Any] | C,
    runtime: RuntimeOptions | None = None,
) -> RunPlan:
    """The plan of one run of ``spec`` with ``config`` (a config model or its fields).

    In order: the config's own checks and its protocol; the prompt templates, whose digest is
    pinned in the config (a run continued after they changed is refused, whoever continues
    it: the CLI, ``api.resume`` or a Ray worker); the players (an unknown name is a usage
    error); the task selection; the model pool; the benchmark's ``prepare``; one player of each
    role built now, so that a configuration error shows before any episode."""
    runtime = runtime or RuntimeOptions()
    cfg = _config(spec, config)
    protocol = getattr(cfg, "protocol", None)
    if spec.protocols and protocol not in spec.protocols:
        raise choice_error("protocol", str(protocol), list(spec.protocols))
    if spec.check is not None:
        cfg = spec.check(cfg) or cfg
    prompts: PromptSet | None = None
    if spec.prompts is not None:
        defaults = spec.prompt_defaults(cfg) if spec.prompt_defaults is not None else None
        prompts = PromptSet.load(spec.prompts, cfg.prompt_overrides, defaults=defaults)
        pinned = spec.pinned_templates(cfg, prompts) if spec.pinned_templates else None
        digest = prompts.digest_of(list(pinned)) if pinned is not None else prompts.digest
        cfg = pin_prompts(cfg, digest, spec.name)
    isolated = _isolated_roles(spec.roles, cfg, runtime)  # never imported in this process
    factories: dict[str, Any] = {
        r.name: r.role.resolve(r.chosen(cfg))
        for r in spec.roles
        if r.role is not None and r.name not in isolated
    }
    set_name = spec.tasks.set_name(cfg)
    if set_name is not None:
        for factory in factories.values():  # a player that cannot play this set says so now
            factory.check_selection(set_name)
    available = list(spec.tasks.load(cfg))
    by_id = {spec.tasks.task_id(t): t for t in available}
    groups = {task_id: spec.tasks.group(t) for task_id, t in by_id.items()}
    canonical = spec.tasks.canonical(cfg, available) if spec.tasks.canonical else str
    ids, selection = select_for_run(
        list(by_id),
        groups,
        cfg,
        task_set=set_name,
        ids=spec.tasks.ids(cfg),
        canonical=canonical,
        noun=spec.tasks.noun,
    )
    models = model_pool(getattr(cfg, "models_file", None), runtime, seed=cfg.seed)
    context: RunContext[C, T] = RunContext(
        config=cfg,
        runtime=runtime,
        tasks={i: by_id[i] for i in ids},
        available=available,
        models=models,
        prompts=prompts,
    )
    if spec.prepare is not None:
        context.shared = spec.prepare(context)
    hubs: list[Any] = []
    options = {
        r.name: _options(r, context, hubs)
        for r in spec.roles
        if r.name in factories or r.name in isolated
    }
    for r in spec.roles:
        if r.name in isolated and r.role is not None:
            factory = isolated_factory(
                r.role,
                r.chosen(cfg),
                options[r.name],
                model=r.model_of(cfg),
                isolation=IsolationOptions(env=runtime.isolate_env),
                hidden=_hidden_from_sandbox(runtime),
            )
            context.closers.append(factory.host.aclose)
            factories[r.name] = factory
    first = {name: factory.build(options[name]) for name, factory in factories.items()}

    async def play(job: EpisodeJob) -> EpisodeRecord:
        players = {name: factory.build(options[name]) for name, factory in factories.items()}
        streams = EpisodeStreams(cfg.seed, job.task_id, job.trial)
        task = context.tasks[job.task_id]
        record = await spec.episode(
            Episode(context, task, players, streams, job.trial, spec.name, job.group, spec.rescore)
        )
        if record.scorer_version is None:
            record.scorer_version = spec.scorer_version
        return record

    async def aclose() -> None:
        try:
            for closer in reversed(context.closers):
                await closer()
        finally:
            await models.aclose()

    finalize = None
    if spec.finalize is not None:
        finish = spec.finalize

        def finalize(records: Iterable[EpisodeRecord]) -> Summary:
            return finish(context, list(records))

    chosen = list(context.tasks.values())
    content = spec.tasks.content
    contents = [content(context, t) if content else task_content(t) for t in chosen]
    legacy = spec.tasks.legacy_hash(context, chosen) if spec.tasks.legacy_hash else None
    infos = models.infos()
    players: dict[str, Any] = {r.name: r.chosen(cfg) for r in spec.roles}
    players.update(context.players_info)
    players["models"] = infos
    return RunPlan(
        benchmark=spec.name,
        config=cfg.model_dump(mode="json"),
        task_set_hash=task_set_hash(contents),
        n_tasks=len(chosen),
        seed=cfg.seed,
        jobs=[
            EpisodeJob(i, trial, groups[i] if spec.tasks.grouped_jobs else "")
            for i in ids
            for trial in range(cfg.trials)
        ],
        play=play,
        players=players,
        roles={
            r.name: _identity(r, cfg, prompts, infos, factories.get(r.name), r.name in isolated)
            for r in spec.roles
        },
        selection=selection,
        protocol=protocol if isinstance(protocol, str) else None,
        grouped=spec.tasks.grouped_jobs,
        factory=spec.reference,
        aclose=aclose,
        success_metric=spec.success_metric
        or (spec.profile.success_metric if spec.profile is not None else None),
        finalize=finalize,
        interactive=any(is_interactive(p) for p in first.values()),
        runtime=runtime,
        legacy_task_set_hashes=(legacy,) if legacy else (),
        context=context,
        reviewer=spec.reviewer or (spec.profile.reviewer if spec.profile is not None else None),
        scorer_version=spec.scorer_version,
    )


def scoring_context(
    spec: BenchmarkSpec[C, T],
    config: Mapping[str, Any] | C,
    runtime: RuntimeOptions | None = None,
) -> RunContext[C, T]:
    """The context a stored run's episodes are scored again in (``todeval rescore``): the
    recorded config, every task of its set by id, the model pool and the spec's
    ``scoring_prepare`` (or ``prepare``);
    no player is built and the config's checks (already passed when the run began) are not
    run again, so a run whose replay file or agent is gone can still be re-graded."""
    runtime = runtime or RuntimeOptions(cache=False)
    cfg = _config(spec, config)
    available = list(spec.tasks.load(cfg))
    context: RunContext[C, T] = RunContext(
        config=cfg,
        runtime=runtime,
        tasks={spec.tasks.task_id(t): t for t in available},
        available=available,
        models=model_pool(getattr(cfg, "models_file", None), runtime, seed=cfg.seed),
        prompts=None,
    )
    prepare = spec.scoring_prepare or spec.prepare
    if prepare is not None:
        context.shared = prepare(context)
    return context


def close_scoring_context(context: RunContext[Any, Any]) -> None:
    """Run a :func:`scoring_context`'s closers (a key file put back, say) in reverse order and
    close its model pool."""
    import asyncio

    async def close() -> None:
        try:
            for closer in reversed(context.closers):
                await closer()
        finally:
            await context.models.aclose()

    asyncio.run(close())


def plan_of(
    spec: BenchmarkSpec[Any, Any], config: Mapping[str, Any], runtime: RuntimeOptions | None
) -> RunPlan:
    """:func:`build_plan` with a recorded config (Ray workers, the Python API)."""
    return build_plan(spec, config, runtime)


def roles_of(spec: BenchmarkSpec[Any, Any]) -> Sequence[str]:
    return [r.name for r in spec.roles]
