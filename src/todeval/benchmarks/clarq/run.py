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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from todeval.agents.hub import AGENT
from todeval.backends.pool import ModelPool
from todeval.backends.types import Backend
from todeval.benchmarks.clarq._judge import RECORDED_JUDGE, Judge, VerdictStore, recorded_verdicts
from todeval.benchmarks.clarq._original import read_original
from todeval.benchmarks.clarq._scoring import ClarqSummary, score_transcripts_async
from todeval.benchmarks.clarq._tasks import SPLITS, ClarqTask, Split, load_tasks
from todeval.benchmarks.clarq._text import LANGUAGES, Language
from todeval.benchmarks.clarq.game import BENCHMARK, play_episode
from todeval.benchmarks.clarq.profile import PROFILE
from todeval.benchmarks.clarq.protocol import MAX_MESSAGES, PROTOCOLS
from todeval.benchmarks.clarq.providers import PROVIDER
from todeval.benchmarks.clarq.providers.llm import provider_templates
from todeval.benchmarks.clarq.replay import REPLAY
from todeval.benchmarks.clarq.rescoring import SCORER_VERSION, rescore
from todeval.benchmarks.clarq.rundir import episode_verdicts, is_run_directory, scored_transcripts
from todeval.benchmarks.clarq.seekers import (
    SEEKER,
    SEEKER_TEMPLATES,
    ReplayScript,
    SeekerMode,
)
from todeval.core.records import EpisodeRecord, MetricSummary, Summary
from todeval.dialogue.replay import episode_key, recording_by_episode
from todeval.errors import BadInputError, RefusedError, UsageError, choice_error
from todeval.runner.naming import run_dir_name
from todeval.runner.options import RunSettings
from todeval.runner.summary import summarize
from todeval.spec import AgentSeat, BenchmarkSpec, Episode, RoleSpec, RunContext, Tasks

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
    seeker_params: dict[str, Any] | None = Field(
        None,
        description="parameters handed to the seeker player (options.extra['params']; the "
        "adversary families' sweep seeker); left out of the config, and its hash, when unset",
    )

    @model_serializer(mode="wrap")
    def _drop_unset_params(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("seeker_params", 0) is None:
            del data["seeker_params"]
        return data

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


def _check(config: ClarqConfig) -> ClarqConfig:
    if config.lang not in LANGUAGES:
        raise choice_error("language", config.lang, list(LANGUAGES))
    if config.task_set not in SPLITS:
        raise choice_error("task set", config.task_set, list(SPLITS))
    if config.seeker_mode != "completion" and config.seeker in MODELLESS_SEEKERS:
        raise UsageError(f"--seeker-mode applies to --seeker llm, not {config.seeker}")
    if config.seeker == "replay" and config.seeker_replay is None:
        raise UsageError("--seeker replay needs --seeker-replay RUN_DIR|RESULT_FILE")
    if config.seeker_replay is not None and config.seeker != "replay":
        raise UsageError("--seeker-replay is for --seeker replay")
    if config.seeker == AGENT and config.seeker_model is not None:
        raise UsageError("--seeker agent brings its own model: drop --seeker-model")
    if config.seeker_replay is None:
        return config
    digest = file_digest(replay_source(config.seeker_replay))
    if config.seeker_replay_sha256 not in (None, digest):
        raise RefusedError(f"{config.seeker_replay} changed since the run started")
    return config.model_copy(update={"seeker_replay_sha256": digest})


def _legacy_hash(run: RunContext[ClarqConfig, ClarqTask], tasks: Iterable[ClarqTask]) -> str:
    """The task-set hash before 0.3 (one JSON array), so older run directories resume."""
    blob = json.dumps([t.model_dump(mode="json") for t in tasks], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ClarqRun:
    """The run-wide parts of a ClarQ run: the judge and how verdicts are found."""

    judge_name: str
    judge_backend: Backend | None
    store: VerdictStore
    warnings: list[str]

    @property
    def release_rule(self) -> bool:
        return self.judge_backend is None


def _prepare(run: RunContext[ClarqConfig, ClarqTask]) -> ClarqRun:
    config = run.config
    judge_backend = run.models.maybe(config.judge_model)
    judge_name = judge_backend.info.model if judge_backend is not None else RECORDED_JUDGE
    store = (
        VerdictStore.default() if run.runtime.cache else VerdictStore(layers=[recorded_verdicts()])
    )
    specs = {
        "seeker": config.seeker_model,
        "provider": config.provider_model,
        "judge": config.judge_model,
    }
    warning = shared_model_warning(specs, run.models)
    warnings = [warning] if warning else []
    run.players_info["judge"] = (
        config.judge_model or f"recorded verdicts ({RECORDED_JUDGE}) + release record"
    )
    if warnings:
        run.players_info["warnings"] = warnings
    return ClarqRun(judge_name, judge_backend, store, warnings)


def _seeker_options(run: RunContext[ClarqConfig, ClarqTask]) -> dict[str, Any]:
    config = run.config
    extra: dict[str, Any] = {"mode": config.seeker_mode}
    if config.seeker_params is not None:
        extra["params"] = dict(config.seeker_params)
    if config.seeker_replay is not None:
        extra["replay"] = load_replay(config.seeker_replay, config.lang)
        if not any(f"{i}#0" in extra["replay"] for i in run.tasks):
            raise BadInputError(f"{config.seeker_replay}: no dialogue of the selected tasks")
    return {"extra": extra}


async def _episode(ep: Episode[ClarqConfig, ClarqTask]) -> EpisodeRecord:
    shared: ClarqRun = ep.run.shared
    config = ep.config
    judge = Judge(
        shared.store, model=shared.judge_name, backend=shared.judge_backend, seed=config.seed
    )
    return await play_episode(
        ep.task,
        ep.players["seeker"],
        ep.players["provider"],
        ep.streams,
        protocol=config.protocol,
        judge=judge,
        release_rule=shared.release_rule,
        max_messages=config.max_messages,
    )


def _finalize(run: RunContext[ClarqConfig, ClarqTask], records: list[EpisodeRecord]) -> Summary:
    shared: ClarqRun = run.shared
    return run_summary(
        records,
        run.tasks,
        judge_name=shared.judge_name,
        online=shared.judge_backend is not None,
        release_rule=shared.release_rule,
        seed=run.config.seed,
        sources=[str(run.runtime.out)] if run.runtime.out is not None else [],
        warnings=shared.warnings,
        verdict_file=shared.store.path,
    )


def _seeker_name(config: ClarqConfig) -> str:
    return "llm-chat" if config.seeker == "llm" and config.seeker_mode == "chat" else config.seeker


SPEC: BenchmarkSpec[ClarqConfig, ClarqTask] = BenchmarkSpec(
    name=BENCHMARK,
    reference="todeval.benchmarks.clarq.run:SPEC",
    reviewer=PROFILE.reviewer,
    config=ClarqConfig,
    tasks=Tasks(
        load=lambda config: load_tasks(config.lang, config.task_set),
        group=lambda task: task.type_name,
        set_name=lambda config: config.selection_name,
        canonical=lambda config, tasks: _canonical(config),
        legacy_hash=_legacy_hash,
    ),
    roles=(
        RoleSpec(
            "seeker",
            SEEKER,
            player_key="seeker",
            model_key="seeker_model",
            identity_keys=("seeker_mode", "seeker_replay", "seeker_replay_sha256"),
            player=_seeker_name,
            templates=lambda config, prompts: SEEKER_TEMPLATES,
            reads_prompts=lambda c: c.seeker_model is not None or c.seeker in ("human", AGENT),
            options=_seeker_options,
            agent=AgentSeat("seeker_url", "seeker_channel"),
        ),
        RoleSpec(
            "provider",
            PROVIDER,
            player_key="provider",
            model_key="provider_model",
            templates=lambda config, prompts: provider_templates(),
        ),
        RoleSpec(
            "judge",
            None,
            model_key="judge_model",
            player=lambda config: "llm" if config.judge_model else "recorded",
            reads_prompts=lambda config: False,  # the judge's prompt is the scorer's, not ours
        ),
    ),
    episode=_episode,
    prompts=PROMPTS_PACKAGE,
    protocols=PROTOCOLS,
    check=_check,
    prepare=_prepare,
    finalize=_finalize,
    success_metric=SUCCESS,
    scorer_version=SCORER_VERSION,
    rescore=rescore,
    replay=REPLAY,
)
"""The ClarQ self-play benchmark, declared (its profile is registered apart: report imports)."""


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


__all__ = [
    "SPEC",
    "ClarqConfig",
    "load_replay",
    "run_summary",
    "shared_model_warning",
]
