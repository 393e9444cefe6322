"""The run plan of a context-to-response benchmark, and its prediction file.

A benchmark describes itself with a :class:`TurnsSpec` -- how a dialogue is grouped, prompted
and hashed, how a reply becomes a predicted turn, which turn fields the scorer reads -- and
hands :func:`build_turns_plan` its loaded dialogues, its reply formats and its scorer call.
The plan has one episode per selected dialogue; ``finalize`` writes the predictions
(``predictions.json`` in the run directory), scores them and returns the scorer's summary plus
the format-failure rate, usage totals and :class:`~.summaries.GenerationStats`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from todeval.backends.sampling import Sampling
from todeval.backends.types import ChatMessage
from todeval.benchmarks._turns.generation import EpisodeContext, PredictedTurn, run_dialogue
from todeval.benchmarks._turns.options import RuntimeOptions, TurnsConfig
from todeval.benchmarks._turns.summaries import add_run_figures, generation_stats, scored_records
from todeval.core.files import write_atomic
from todeval.core.identity import role_identity
from todeval.core.records import EpisodeRecord, Summary
from todeval.dialogue.chat import JsonReply
from todeval.dialogue.episode import EpisodeStreams
from todeval.dialogue.prompts import PromptSet
from todeval.dialogue.replies import ReplyChecker
from todeval.runner.options import model_pool, pin_prompts
from todeval.runner.plan import EpisodeJob, RunPlan
from todeval.runner.selection import select_for_run
from todeval.runner.store import cannot_write

PLAYER = "llm"
"""The player of the one role, ``system``: a model generating each turn from the gold history."""

PREDICTIONS_FILE = "predictions.json"
"""The prediction file's name in the run directory."""

Predictions = dict[str, list[dict[str, Any]]]
"""Dialogue id -> the predicted turns, as the scorer reads them."""

Score = Callable[[Predictions, Path | None], Summary | None]
"""The benchmark's scorer call: the predictions and the file they were written to (``None``
without a run directory) -> the scorer's summary, or ``None`` when nothing was scored (the run's
summary is then the run figures alone)."""


class TurnsDialogue(Protocol):
    """What the shared run reads of a benchmark's dialogue."""

    @property
    def dialogue_id(self) -> str: ...

    @property
    def n_turns(self) -> int: ...


D = TypeVar("D", bound=TurnsDialogue)


@dataclass(frozen=True)
class ReplyFormat:
    """The JSON schema a reply must follow, and its checker."""

    schema: dict[str, Any]
    checker: ReplyChecker

    @classmethod
    def of(cls, schema: dict[str, Any]) -> ReplyFormat:
        return cls(schema, ReplyChecker(schema))


def _no_details(dialogue: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class TurnsSpec(Generic[D]):
    """What differs between context-to-response benchmarks (besides corpus and scorer)."""

    benchmark: str
    metric_prefix: str
    factory: str  # "module:function" rebuilding a plan from its recorded config
    prompts_package: str  # the package whose prompts/ folder holds the templates
    summary_type: type[Summary]  # the scorer's summary with a ``generation`` field
    prediction_fields: tuple[str, ...]  # the turn fields written to the prediction file
    group: Callable[[D], str]
    messages: Callable[[D, int, PromptSet], list[ChatMessage]]
    to_turn: Callable[[JsonReply, PredictedTurn | None], PredictedTurn]
    task_key: Callable[[D], Any]  # the dialogue's content, hashed into the task-set hash
    details: Callable[[D], dict[str, Any]] = field(default=_no_details)


def predictions_of(
    records: Iterable[EpisodeRecord], order: Sequence[str], fields: Sequence[str]
) -> Predictions:
    """The scorer's prediction format, dialogues in ``order``.

    Dialogues with an infrastructure error (or without turns) are left out.
    """
    by_id = {r.task_id: r for r in scored_records(list(records))}
    out: Predictions = {}
    for dialogue_id in order:
        record = by_id.get(dialogue_id)
        turns = record.details.get("turns", []) if record is not None else []
        if turns:
            out[dialogue_id] = [{name: t[name] for name in fields} for t in turns]
    return out


def task_set_hash(keys: Sequence[Any]) -> str:
    """A short digest of the dialogues' contents (guards resumes against a changed corpus)."""
    blob = json.dumps(list(keys), separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_turns_plan(
    spec: TurnsSpec[D],
    config: TurnsConfig,
    runtime: RuntimeOptions,
    dialogues: Sequence[D],
    *,
    task_set: str,
    canonical: Callable[[str], str],
    reply_format: Callable[[D], ReplyFormat],
    score: Score,
) -> tuple[RunPlan, list[D]]:
    """The run plan over the dialogues ``config`` selects from ``task_set`` (the corpus split
    ``dialogues`` come from; ids read through ``canonical``; ``--limit`` stratified over the
    dialogues' groups unless ``limit_mode`` is ``first``)."""
    by_id = {d.dialogue_id: d for d in dialogues}
    groups = {d.dialogue_id: spec.group(d) for d in dialogues}
    ids, selection = select_for_run(
        list(by_id),
        groups,
        config,
        task_set=task_set,
        ids=config.dialogue_ids,
        canonical=canonical,
        noun="dialogue",
    )
    chosen = [by_id[i] for i in ids]
    prompts = PromptSet.load(spec.prompts_package, config.prompt_overrides)
    config = pin_prompts(config, prompts.digest, spec.benchmark)
    pool = model_pool(config.models_file, runtime, seed=config.seed)
    model = pool.get(config.model)  # a bad model spec is reported before any dialogue runs
    sampling = Sampling(config.constrained, config.temperature, config.max_tokens)

    async def play(job: EpisodeJob) -> EpisodeRecord:
        dialogue = by_id[job.task_id]
        seed = EpisodeStreams(config.seed, job.task_id, job.trial).seed
        form = reply_format(dialogue)
        conversations = [spec.messages(dialogue, i, prompts) for i in range(dialogue.n_turns)]
        context = EpisodeContext(
            spec.benchmark, dialogue.dialogue_id, spec.group(dialogue), seed, spec.metric_prefix
        )
        checkers = [form.checker] * len(conversations)
        details = spec.details(dialogue)
        return await run_dialogue(
            context, model, sampling, conversations, checkers, spec.to_turn, details
        )

    def finalize(records: Iterable[EpisodeRecord]) -> Summary:
        return finalize_turns(spec, list(records), config, ids, runtime.out, score)

    plan = RunPlan(
        benchmark=spec.benchmark,
        config=config.model_dump(mode="json"),
        task_set_hash=task_set_hash([spec.task_key(d) for d in chosen]),
        n_tasks=len(chosen),
        seed=config.seed,
        jobs=[EpisodeJob(d.dialogue_id, 0, spec.group(d)) for d in chosen],
        play=play,
        players={"system": config.model, "models": pool.infos()},
        roles={
            "system": role_identity(
                PLAYER,
                model=config.model,
                infos=pool.infos(),
                prompts_sha256=prompts.digest,
                config_keys=["model"],
            )
        },
        selection=selection,
        protocol=config.protocol,
        factory=spec.factory,
        aclose=pool.aclose,
        finalize=finalize,
        runtime=runtime,
    )
    return plan, chosen


def finalize_turns(
    spec: TurnsSpec[D],
    records: list[EpisodeRecord],
    config: TurnsConfig,
    order: Sequence[str],
    out: Path | None,
    score: Score,
) -> Summary:
    """Write the prediction file (when there is a run directory), score it, add run figures."""
    predictions = predictions_of(records, order, spec.prediction_fields)
    source: Path | None = None
    if out is not None:
        source = out / PREDICTIONS_FILE
        text = json.dumps(predictions, ensure_ascii=False, indent=1)
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_atomic(source, text + "\n")
        except OSError as exc:
            raise cannot_write(source, exc) from None
    stats = generation_stats(
        records,
        predictions=PREDICTIONS_FILE if source is not None else "",
        prompt_version=config.prompt_version,
    )
    summary = score(predictions, source)
    base = summary
    if base is None:
        base = Summary(benchmark=spec.benchmark, n_episodes=0, outcomes={}, metrics={})
    update = add_run_figures(
        base, records, benchmark=spec.benchmark, prefix=spec.metric_prefix, seed=config.seed,
        resamples=config.resamples,
    )  # fmt: skip
    if summary is None:
        return base.model_copy(update=update)
    fields = summary.model_dump()
    fields.update(update)
    return spec.summary_type.model_validate({**fields, "generation": stats})
