"""A ClarQ self-play run from its config: the plan the shared runner executes.

One episode per selected task and trial (``EpisodeJob.group`` = the task type, the scorer's
bootstrap cluster, so ``--limit`` spreads over types and per-group figures are per type; the
tree depth is in each record's details and in the per-depth metrics). Each episode is scored
when it ends (:func:`~todeval.benchmarks.clarq.game.play_episode`); ``finalize`` re-scores the
whole run with the same scorer (offline: the verdicts the episodes obtained are in their
records) for the corpus summary, a :class:`~todeval.benchmarks.clarq._scoring.ClarqSummary`
with the runner's usage, cost, latency, labels and pass^k added.

The judge: ``judge_model`` (a spec or models-file name) is asked for verdicts no cache holds;
without one, the recorded verdicts (and the user's verdict file) answer what they can and the
release record decides the rest: a gold sentence whose response was never released is a
"no" (only information the provider released counts).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from todeval.agents.hub import AGENT, AgentHub, check_agent_choice
from todeval.backends.pool import ModelPool
from todeval.benchmarks.clarq._judge import RECORDED_JUDGE, Judge, VerdictStore, recorded_verdicts
from todeval.benchmarks.clarq._original import read_original
from todeval.benchmarks.clarq._scoring import ClarqSummary, score_transcripts_async
from todeval.benchmarks.clarq._tasks import SPLITS, ClarqTask, Split, load_tasks
from todeval.benchmarks.clarq._text import LANGUAGES, Language
from todeval.benchmarks.clarq.game import BENCHMARK, play_episode
from todeval.benchmarks.clarq.protocol import MAX_MESSAGES, PROTOCOLS
from todeval.benchmarks.clarq.providers import PROVIDER
from todeval.benchmarks.clarq.providers.llm import provider_templates
from todeval.benchmarks.clarq.rundir import episode_verdicts, is_run_directory, scored_transcripts
from todeval.benchmarks.clarq.seekers import (
    SEEKER,
    SEEKER_TEMPLATES,
    ReplayScript,
    SeekerMode,
)
from todeval.core.identity import RoleIdentity, role_identity
from todeval.core.records import EpisodeRecord, MetricSummary, Summary
from todeval.dialogue.episode import EpisodeStreams
from todeval.dialogue.participants import PlayerOptions, is_interactive
from todeval.dialogue.prompts import PromptSet
from todeval.dialogue.replay import episode_key, recording_by_episode
from todeval.errors import BadInputError, RefusedError, UsageError, choice_error
from todeval.runner.naming import run_dir_name
from todeval.runner.options import RunSettings, RuntimeOptions, model_pool, pin_prompts
from todeval.runner.plan import EpisodeJob, RunPlan
from todeval.runner.selection import select_for_run
from todeval.runner.summary import summarize

PROMPTS_PACKAGE = "todeval.benchmarks.clarq"  # prompts/: seeker_* (ours here), provider_*
SUCCESS = "clarq.success"
MODELLESS_SEEKERS = ("oracle", "wrong", "quitter", "replay", "human", "agent")
"""Built-in seekers that call no model of ours (``--seeker-mode`` means nothing to them)."""


class ClarqConfig(RunSettings):
    """Everything that determines a ClarQ self-play run's results (hashed to guard resumes)."""

    lang: Language = "en"
    task_set: Split = "test"
    ids: list[str] | None = None
    protocol: str = PROTOCOLS[0]
    seeker: str = "oracle"
    seeker_model: str | None = None
    seeker_mode: SeekerMode = "completion"
    seeker_replay: str | None = None
    seeker_replay_sha256: str | None = None
    seeker_url: str | None = Field(None, description="--seeker agent: its chat endpoint")
    seeker_channel: str | None = Field(
        None, description="--seeker agent: the chat endpoint's shape (None: openai-chat)"
    )
    provider: str = "rule"
    provider_model: str | None = None
    judge_model: str | None = None
    models_file: str | None = None
    models_file_sha256: str | None = None
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None
    max_messages: int = Field(
        MAX_MESSAGES, ge=2, description="message cap (22, the protocol's; lower for smoke tests)"
    )

    def default_out(self) -> str:
        seeker = self.seeker + (f"-{self.seeker_mode}" if self.seeker == "llm" else "")
        return run_dir_name(
            BENCHMARK,
            [
                self.lang,
                self.task_set,
                seeker,
                *([self.seeker_model] if self.seeker_model else []),
                self.provider,
                *([self.provider_model] if self.provider_model else []),
            ],
            seed=self.seed,
            constrained=self.constrained,
            limit=self.limit,
            limit_mode=self.limit_mode,
            ids=self.ids,
            trials=self.trials,
            protocol=None if self.protocol == PROTOCOLS[0] else self.protocol,
        )

    @property
    def selection_name(self) -> str:
        """The task set as recorded (``en/test``): boards never mix languages or splits."""
        return f"{self.lang}/{self.task_set}"


def file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def replay_source(path: str) -> Path:
    """The file a recording's digest is taken of (a run's episodes, or the result file)."""
    source = Path(path)
    if is_run_directory(source):
        return source / "episodes.jsonl"
    if source.is_file():
        return source
    raise BadInputError(f"{source}: neither a run directory nor a result file to replay")


def load_replay(path: str, lang: Language) -> ReplayScript:
    """Recorded seeker turns by episode id: a run directory's ``seeker_message`` events, or the
    seeker turns of a released result file (``results/l2l_*.json``)."""
    source = Path(path)
    if is_run_directory(source):
        return recording_by_episode(source, kind="seeker_message")
    records = read_original(replay_source(path), language=lang).records
    return {
        episode_key(r.task_id, r.trial): r.messages[1::2] for r in records if r.messages is not None
    }


def shared_model_warning(specs: Mapping[str, str | None], models: ModelPool) -> str | None:
    """A warning when two of seeker, provider and judge are the same model."""
    by_model: dict[str, list[str]] = defaultdict(list)
    for role, spec in specs.items():
        if spec is not None:
            by_model[models.get(spec).info.model].append(role)
    shared = [(model, roles) for model, roles in by_model.items() if len(roles) > 1]
    if not shared:
        return None
    parts = [
        f"{', '.join(roles[:-1])} and {roles[-1]} share the model {model!r}"
        for model, roles in shared
    ]
    return (
        "; ".join(parts) + ": a model asking, answering or judging its own kind of text may "
        "favour it -- read the scores with that in mind"
    )


def _canonical(config: ClarqConfig) -> Any:
    def canonical(task_id: str) -> str:
        return task_id if task_id.count("/") == 2 else f"{config.selection_name}/{task_id}"

    return canonical


def _check(config: ClarqConfig) -> None:
    if config.lang not in LANGUAGES:
        raise choice_error("language", config.lang, list(LANGUAGES))
    if config.task_set not in SPLITS:
        raise choice_error("task set", config.task_set, list(SPLITS))
    if config.protocol not in PROTOCOLS:
        raise choice_error("protocol", config.protocol, list(PROTOCOLS))
    if config.seeker_mode != "completion" and config.seeker in MODELLESS_SEEKERS:
        raise UsageError(f"--seeker-mode applies to --seeker llm, not {config.seeker}")
    if config.seeker == "replay" and config.seeker_replay is None:
        raise UsageError("--seeker replay needs --seeker-replay RUN_DIR|RESULT_FILE")
    if config.seeker_replay is not None and config.seeker != "replay":
        raise UsageError("--seeker-replay is for --seeker replay")
    check_agent_choice("seeker", config.seeker, config.seeker_url, config.seeker_channel)
    if config.seeker == AGENT and config.seeker_model is not None:
        raise UsageError("--seeker agent brings its own model: drop --seeker-model")


def _task_set_hash(tasks: Iterable[ClarqTask]) -> str:
    blob = json.dumps([t.model_dump(mode="json") for t in tasks], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_plan(config: ClarqConfig, runtime: RuntimeOptions | None = None) -> RunPlan:
    """The plan of a ClarQ run (players built once now, so a configuration error shows before
    any episode)."""
    runtime = runtime or RuntimeOptions()
    _check(config)
    prompts = PromptSet.load(PROMPTS_PACKAGE, config.prompt_overrides)
    config = pin_prompts(config, prompts.digest, "ClarQ")
    update: dict[str, Any] = {}
    if config.seeker_replay is not None:
        digest = file_digest(replay_source(config.seeker_replay))
        if config.seeker_replay_sha256 not in (None, digest):
            raise RefusedError(f"{config.seeker_replay} changed since the run started")
        update["seeker_replay_sha256"] = digest
    config = config.model_copy(update=update)
    seeker = SEEKER.resolve(config.seeker)
    provider = PROVIDER.resolve(config.provider)
    tasks = {t.task_id: t for t in load_tasks(config.lang, config.task_set)}
    groups = {t.task_id: t.type_name for t in tasks.values()}
    ids, selection = select_for_run(
        list(tasks),
        groups,
        config,
        task_set=config.selection_name,
        ids=config.ids,
        canonical=_canonical(config),
    )
    chosen = {i: tasks[i] for i in ids}
    models = model_pool(config.models_file, runtime, seed=config.seed)
    common: dict[str, Any] = {
        "constrained": config.constrained,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "prompts": prompts,
    }
    extra: dict[str, Any] = {"mode": config.seeker_mode}
    if config.seeker_replay is not None:
        extra["replay"] = load_replay(config.seeker_replay, config.lang)
        if not any(f"{i}#0" in extra["replay"] for i in ids):
            raise BadInputError(f"{config.seeker_replay}: no dialogue of the selected tasks")
    aclose = models.aclose
    if config.seeker == AGENT:
        hub = AgentHub()  # one keep-alive client for every episode's agent seeker
        extra.update(hub.player_extra(config.seeker_url, config.seeker_channel))
        aclose = hub.closing(models.aclose)

    seeker_options = PlayerOptions(
        role="seeker", model=models.maybe(config.seeker_model), extra=extra, **common
    )
    provider_options = PlayerOptions(
        role="provider", model=models.maybe(config.provider_model), **common
    )
    first_seeker = seeker.build(seeker_options)
    provider.build(provider_options)
    judge_backend = models.maybe(config.judge_model)
    judge_name = judge_backend.info.model if judge_backend is not None else RECORDED_JUDGE
    release_rule = judge_backend is None
    store = VerdictStore.default() if runtime.cache else VerdictStore(layers=[recorded_verdicts()])
    specs = {
        "seeker": config.seeker_model,
        "provider": config.provider_model,
        "judge": config.judge_model,
    }
    warning = shared_model_warning(specs, models)
    warnings = [warning] if warning else []

    async def play(job: EpisodeJob) -> EpisodeRecord:
        judge = Judge(store, model=judge_name, backend=judge_backend, seed=config.seed)
        return await play_episode(
            chosen[job.task_id],
            seeker.build(seeker_options),
            provider.build(provider_options),
            EpisodeStreams(config.seed, job.task_id, job.trial),
            protocol=config.protocol,
            judge=judge,
            release_rule=release_rule,
            max_messages=config.max_messages,
        )

    def finalize(records: Iterable[EpisodeRecord]) -> Summary:
        return run_summary(
            list(records),
            chosen,
            judge_name=judge_name,
            online=judge_backend is not None,
            release_rule=release_rule,
            seed=config.seed,
            sources=[str(runtime.out)] if runtime.out is not None else [],
            warnings=warnings,
            verdict_file=store.path,
        )

    infos = models.infos()
    players: dict[str, Any] = {
        "seeker": config.seeker,
        "provider": config.provider,
        "judge": config.judge_model or f"recorded verdicts ({RECORDED_JUDGE}) + release record",
        "models": infos,
    }
    if warnings:
        players["warnings"] = warnings
    return RunPlan(
        benchmark=BENCHMARK,
        config=config.model_dump(mode="json"),
        task_set_hash=_task_set_hash(chosen.values()),
        n_tasks=len(chosen),
        seed=config.seed,
        jobs=[
            EpisodeJob(t.task_id, trial, t.type_name)
            for t in chosen.values()
            for trial in range(config.trials)
        ],
        play=play,
        players=players,
        roles=_roles(config, infos, prompts),
        selection=selection,
        protocol=config.protocol,
        factory="todeval.benchmarks.clarq.run:plan_from_config",
        aclose=aclose,
        success_metric=SUCCESS,
        finalize=finalize,
        interactive=is_interactive(first_seeker),
        runtime=runtime,
    )


def run_summary(
    records: list[EpisodeRecord],
    tasks: dict[str, ClarqTask],
    *,
    judge_name: str,
    online: bool,
    release_rule: bool,
    seed: int,
    sources: list[str],
    warnings: list[str],
    verdict_file: Path | None = None,
) -> ClarqSummary:
    """The corpus summary of a run's episodes: the scorer over their transcripts (offline: the
    recorded verdicts and the ones the episodes obtained), with the per-depth S, the share of
    responses released, pass^k and the runner's usage, cost, latency, labels and timing."""
    judge = Judge(
        VerdictStore(layers=[recorded_verdicts(), episode_verdicts(records)]), model=judge_name
    )
    score = asyncio.run(
        score_transcripts_async(
            scored_transcripts(records, tasks),
            judge,
            seed=seed,
            sources=sources,
            warnings=warnings,
            release_rule=release_rule,
        )
    )
    generic = summarize(BENCHMARK, records, seed=seed, success_metric=SUCCESS)
    summary = score.summary
    metrics = dict(summary.metrics)
    for group, estimate in summary.by_depth.get(SUCCESS, {}).items():
        metrics[f"{SUCCESS}.depth{group}"] = MetricSummary(micro=estimate)
    metrics.update(
        {k: v for k, v in generic.metrics.items() if k == "clarq.released" or ".pass^" in k}
    )
    judge_usage = generic.usage.get("judge")
    report = summary.judge.model_copy(
        update={
            "online": online,
            "new_calls": judge_usage.calls - judge_usage.cached_calls if judge_usage else 0,
            "verdict_file": str(verdict_file) if verdict_file is not None else None,
        }
    )
    return summary.model_copy(
        update={
            "metrics": metrics,
            "n_episodes": generic.n_episodes,
            "outcomes": generic.outcomes,
            "excluded": generic.excluded,
            "usage": generic.usage,
            "cost": generic.cost,
            "latency": generic.latency,
            "labels": generic.labels,
            "timing": generic.timing,
            "judge": report,
        }
    )


def _roles(
    config: ClarqConfig, infos: dict[str, Any], prompts: PromptSet
) -> dict[str, RoleIdentity]:
    """Seeker, provider and judge (prompt digests for the roles a model plays)."""
    seeker = config.seeker
    if seeker == "llm" and config.seeker_mode == "chat":
        seeker = "llm-chat"
    reads_prompts = config.seeker_model is not None or config.seeker in ("human", "agent")
    return {
        "seeker": role_identity(
            seeker,
            model=config.seeker_model,
            infos=infos,
            prompts_sha256=prompts.digest_of(SEEKER_TEMPLATES) if reads_prompts else None,
            config_keys=[
                "seeker",
                "seeker_model",
                "seeker_mode",
                "seeker_replay",
                "seeker_replay_sha256",
                "seeker_url",
                "seeker_channel",
            ],
            privileged=SEEKER.resolve(config.seeker).privileged,
        ),
        "provider": role_identity(
            config.provider,
            model=config.provider_model,
            infos=infos,
            prompts_sha256=(
                prompts.digest_of(provider_templates()) if config.provider_model else None
            ),
            config_keys=["provider", "provider_model"],
        ),
        "judge": role_identity(
            "llm" if config.judge_model else "recorded",
            model=config.judge_model,
            infos=infos,
            config_keys=["judge_model"],
        ),
    }


def plan_from_config(config: dict[str, Any], runtime: RuntimeOptions | None = None) -> RunPlan:
    """Rebuild a plan from its recorded config (Ray workers, the Python API)."""
    return build_plan(ClarqConfig.model_validate(config), runtime)


__all__ = [
    "ClarqConfig",
    "build_plan",
    "load_replay",
    "plan_from_config",
    "run_summary",
    "shared_model_warning",
]
