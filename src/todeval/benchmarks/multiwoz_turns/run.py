"""Build the run plan of ``multiwoz-turns``: one episode per test dialogue, corpus scoring.

Each dialogue's system turns are generated from the gold history (context-to-response); the
episode record keeps the predicted turns in ``details.turns``. ``finalize`` writes them as a
prediction file in the community format (``predictions.json`` in the run directory), scores it
with :func:`todeval.scoring.multiwoz.evaluate` and returns the scorer's summary plus the
format-failure rate and usage totals.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from todeval.benchmarks.multiwoz_turns.corpus import (
    MultiwozDialogue,
    canonical_id,
    load_dialogues,
)
from todeval.benchmarks.multiwoz_turns.prompts import PROMPT_VERSION, messages, reply_schema
from todeval.benchmarks.multiwoz_turns.shared.generation import (
    EpisodeContext,
    ModelPool,
    PredictedTurn,
    Sampling,
    TurnReply,
    run_dialogue,
)
from todeval.benchmarks.multiwoz_turns.shared.options import (
    RuntimeOptions,
    TurnsConfig,
    select_ids,
)
from todeval.benchmarks.multiwoz_turns.shared.replies import ReplyChecker
from todeval.benchmarks.multiwoz_turns.shared.summaries import (
    GenerationStats,
    add_run_figures,
    generation_stats,
    scored_records,
)
from todeval.core.records import EpisodeRecord, Summary
from todeval.core.rng import derive_seed
from todeval.errors import UsageError
from todeval.runner.execute import EpisodeJob, RunPlan
from todeval.scoring.multiwoz import (
    CorpusData,
    MultiwozResult,
    MultiwozSummary,
    VenueDatabase,
    evaluate,
    to_summary,
)

BENCHMARK = "multiwoz-turns"
METRIC_PREFIX = "multiwoz"
PREDICTIONS_FILE = "predictions.json"
ActiveDomains = Literal["given", "state", "placeholders"]


class MultiwozTurnsConfig(TurnsConfig):
    """Everything that determines a ``multiwoz-turns`` run (hashed to guard resumes)."""

    benchmark: Literal["multiwoz-turns"] = "multiwoz-turns"
    active_domains: ActiveDomains = "given"
    prompt_version: str = PROMPT_VERSION

    def default_out(self) -> str:
        return self.run_name(BENCHMARK)


class MultiwozTurnsSummary(MultiwozSummary):
    """The scorer's summary plus the generation side of the run."""

    generation: GenerationStats


@dataclass
class Scored:
    """The last scoring of the run (the CLI prints the scorer's table from it)."""

    result: MultiwozResult | None = None
    summary: MultiwozSummary | None = None


def _to_turn(reply: TurnReply, previous: PredictedTurn | None) -> PredictedTurn:
    if reply.value is None:
        return PredictedTurn(
            response="",
            state=dict(previous.state) if previous is not None else {},
            active_domains=[],
            format_error=reply.format_error,
            raw=reply.raw,
        )
    value = reply.value
    return PredictedTurn(
        response=value["response"],
        state=value["state"],
        active_domains=list(value["active_domains"]),
    )


def predictions_of(
    records: Iterable[EpisodeRecord], order: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """The community prediction format, dialogues in ``order`` (infrastructure errors left out)."""
    by_id = {r.task_id: r for r in scored_records(list(records))}
    out: dict[str, list[dict[str, Any]]] = {}
    for dialogue_id in order:
        record = by_id.get(dialogue_id)
        if record is None:
            continue
        out[dialogue_id] = [
            {"response": t["response"], "state": t["state"], "active_domains": t["active_domains"]}
            for t in record.details.get("turns", [])
        ]
    return out


def _task_set_hash(dialogues: list[MultiwozDialogue]) -> str:
    blob = json.dumps(
        [[d.dialogue_id, d.users, d.systems] for d in dialogues], separators=(",", ":")
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_plan(
    config: MultiwozTurnsConfig,
    runtime: RuntimeOptions | None = None,
    scored: Scored | None = None,
) -> tuple[RunPlan, list[MultiwozDialogue]]:
    """The run plan; ``scored`` (if given) receives the final scoring for the CLI's table."""
    runtime = runtime or RuntimeOptions()
    scored = scored if scored is not None else Scored()
    corpus = CorpusData()
    all_dialogues = load_dialogues(corpus)
    by_id = {d.dialogue_id: d for d in all_dialogues}
    ids = select_ids(list(by_id), config.dialogue_ids, config.limit, canonical_id)
    if not ids:
        raise UsageError("no dialogues selected")
    dialogues = [by_id[i] for i in ids]
    pool = ModelPool(
        config.model,
        config.models_file,
        cache=runtime.cache,
        cache_path=runtime.cache_path,
        retry=runtime.retry,
        script=runtime.script,
        seed=config.seed,
    )
    pool.get()  # a bad model spec is reported before any dialogue runs
    sampling = Sampling(config.constrained, config.temperature, config.max_tokens)
    schema = reply_schema()
    checker = ReplyChecker(schema)

    async def play(job: EpisodeJob) -> EpisodeRecord:
        dialogue = by_id[job.task_id]
        seed = derive_seed(config.seed, job.task_id, job.trial)
        requests = [
            sampling.request(messages(dialogue, i), schema, seed=seed)
            for i in range(dialogue.n_turns)
        ]
        context = EpisodeContext(BENCHMARK, dialogue.dialogue_id, dialogue.group, seed, "multiwoz")
        return await run_dialogue(
            context, pool.get(), requests, [checker] * len(requests), _to_turn
        )

    def finalize(records: Iterable[EpisodeRecord]) -> Summary:
        return _finalize(list(records), config, ids, runtime.out, corpus, scored)

    plan = RunPlan(
        benchmark=BENCHMARK,
        config=config.model_dump(mode="json"),
        task_set_hash=_task_set_hash(dialogues),
        n_tasks=len(dialogues),
        seed=config.seed,
        jobs=[EpisodeJob(d.dialogue_id, 0, d.group) for d in dialogues],
        play=play,
        players={"system": config.model, "models": {config.model: pool.info()}},
        factory="todeval.benchmarks.multiwoz_turns.run:plan_from_config",
        aclose=pool.aclose,
        finalize=finalize,
    )
    return plan, dialogues


def _finalize(
    records: list[EpisodeRecord],
    config: MultiwozTurnsConfig,
    order: list[str],
    out: Path | None,
    corpus: CorpusData,
    scored: Scored,
) -> Summary:
    predictions = predictions_of(records, order)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(predictions, ensure_ascii=False, indent=1)
        (out / PREDICTIONS_FILE).write_text(text + "\n", encoding="utf-8")
    stats = generation_stats(
        records, predictions=PREDICTIONS_FILE if out else "", prompt_version=config.prompt_version
    )
    if not predictions:
        scored.result = scored.summary = None
        empty = Summary(benchmark=BENCHMARK, n_episodes=0, outcomes={}, metrics={})
        update = add_run_figures(
            empty, records, benchmark=BENCHMARK, prefix=METRIC_PREFIX, seed=config.seed,
            resamples=config.resamples,
        )  # fmt: skip
        return empty.model_copy(update=update)
    result = evaluate(
        predictions,
        active_domains=config.active_domains,
        corpus=corpus,
        database=VenueDatabase(),
    )
    if out is not None:
        result = result.model_copy(update={"source": str(out / PREDICTIONS_FILE)})
    summary = to_summary(result, seed=config.seed, resamples=config.resamples)
    scored.result, scored.summary = result, summary
    update = add_run_figures(
        summary, records, benchmark=BENCHMARK, prefix=METRIC_PREFIX, seed=config.seed,
        resamples=config.resamples,
    )  # fmt: skip
    fields = summary.model_dump()
    fields.update(update)
    return MultiwozTurnsSummary.model_validate({**fields, "generation": stats})


def plan_from_config(config: dict[str, Any]) -> RunPlan:
    """Rebuild a plan from its recorded config (Ray workers; ``finalize`` is not used there)."""
    return build_plan(MultiwozTurnsConfig.model_validate(config))[0]
