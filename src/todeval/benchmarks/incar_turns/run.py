"""Build the run plan of ``incar-turns``: one episode per KVRET dialogue, corpus scoring.

Each turn is generated from the gold history, the dialogue's intent and its knowledge base;
``finalize`` writes the predictions in the scorer's format (``predictions.json`` in the run
directory), scores them with :mod:`todeval.scoring.incar` and returns the scorer's summary plus
the format-failure rate and usage totals.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from todeval.benchmarks.incar_turns.corpus import IncarDialogue, load_dialogues
from todeval.benchmarks.incar_turns.prompts import PROMPT_VERSION, messages, reply_schema
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
from todeval.scoring.incar import (
    GoldSplit,
    IncarResult,
    Lexicon,
    Split,
    load_gold,
    load_lexicon,
    parse_predictions,
    score_predictions,
)

BENCHMARK = "incar-turns"
METRIC_PREFIX = "incar"
PREDICTIONS_FILE = "predictions.json"


class IncarTurnsConfig(TurnsConfig):
    """Everything that determines an ``incar-turns`` run (hashed to guard resumes)."""

    benchmark: Literal["incar-turns"] = "incar-turns"
    split: Split = "test"
    prompt_version: str = PROMPT_VERSION

    def default_out(self) -> str:
        return self.run_name(BENCHMARK, self.split)


class IncarTurnsSummary(Summary):
    """The scorer's summary plus the generation side of the run."""

    generation: GenerationStats


@dataclass
class Scored:
    """The last scoring of the run (the CLI prints the scorer's table from it)."""

    result: IncarResult | None = None


def _to_turn(reply: TurnReply, previous: PredictedTurn | None) -> PredictedTurn:
    if reply.value is None:
        return PredictedTurn(
            response="",
            state=dict(previous.state) if previous is not None else {},
            format_error=reply.format_error,
            raw=reply.raw,
        )
    return PredictedTurn(response=reply.value["response"], state=reply.value["state"])


def predictions_of(
    records: Iterable[EpisodeRecord], order: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """The scorer's prediction format, dialogues in ``order`` (infrastructure errors left out)."""
    by_id = {r.task_id: r for r in scored_records(list(records))}
    out: dict[str, list[dict[str, Any]]] = {}
    for dialogue_id in order:
        record = by_id.get(dialogue_id)
        turns = record.details.get("turns", []) if record is not None else []
        if turns:
            out[dialogue_id] = [{"response": t["response"], "state": t["state"]} for t in turns]
    return out


def _task_set_hash(dialogues: list[IncarDialogue]) -> str:
    blob = json.dumps(
        [[d.dialogue_id, d.intent, d.rows, [[t.users, t.response] for t in d.turns]]
         for d in dialogues],
        separators=(",", ":"),
    )  # fmt: skip
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_plan(
    config: IncarTurnsConfig,
    runtime: RuntimeOptions | None = None,
    scored: Scored | None = None,
) -> tuple[RunPlan, list[IncarDialogue]]:
    """The run plan; ``scored`` (if given) receives the final scoring for the CLI's table."""
    runtime = runtime or RuntimeOptions()
    scored = scored if scored is not None else Scored()
    lexicon = load_lexicon()
    gold = load_gold(config.split, lexicon)
    by_id = {d.dialogue_id: d for d in load_dialogues(config.split, gold)}
    ids = select_ids(list(by_id), config.dialogue_ids, config.limit, lambda i: i.strip())
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
    schemas = {intent: reply_schema(intent) for intent in ("schedule", "navigate", "weather")}
    checkers = {intent: ReplyChecker(schema) for intent, schema in schemas.items()}

    async def play(job: EpisodeJob) -> EpisodeRecord:
        dialogue = by_id[job.task_id]
        seed = derive_seed(config.seed, job.task_id, job.trial)
        schema = schemas[dialogue.intent]
        requests = [
            sampling.request(messages(dialogue, i), schema, seed=seed)
            for i in range(dialogue.n_turns)
        ]
        context = EpisodeContext(BENCHMARK, dialogue.dialogue_id, dialogue.intent, seed, "incar")
        return await run_dialogue(
            context,
            pool.get(),
            requests,
            [checkers[dialogue.intent]] * len(requests),
            _to_turn,
            {"intent": dialogue.intent},
        )

    def finalize(records: Iterable[EpisodeRecord]) -> Summary:
        return _finalize(list(records), config, ids, runtime.out, gold, lexicon, scored)

    plan = RunPlan(
        benchmark=BENCHMARK,
        config=config.model_dump(mode="json"),
        task_set_hash=_task_set_hash(dialogues),
        n_tasks=len(dialogues),
        seed=config.seed,
        jobs=[EpisodeJob(d.dialogue_id, 0, d.intent) for d in dialogues],
        play=play,
        players={"system": config.model, "models": {config.model: pool.info()}},
        factory="todeval.benchmarks.incar_turns.run:plan_from_config",
        aclose=pool.aclose,
        finalize=finalize,
    )
    return plan, dialogues


def _finalize(
    records: list[EpisodeRecord],
    config: IncarTurnsConfig,
    order: list[str],
    out: Path | None,
    gold: GoldSplit,
    lexicon: Lexicon,
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
    if predictions:
        parsed = parse_predictions(predictions, gold)
        result = score_predictions(
            parsed, gold, lexicon=lexicon, seed=config.seed, resamples=config.resamples
        )
        scored.result = result
        summary = result.summary
    else:
        scored.result = None
        summary = Summary(benchmark=BENCHMARK, n_episodes=0, outcomes={}, metrics={})
    update = add_run_figures(
        summary, records, benchmark=BENCHMARK, prefix=METRIC_PREFIX, seed=config.seed,
        resamples=config.resamples,
    )  # fmt: skip
    fields = summary.model_dump()
    fields.update(update)
    return IncarTurnsSummary.model_validate({**fields, "generation": stats})


def plan_from_config(config: dict[str, Any]) -> RunPlan:
    """Rebuild a plan from its recorded config (Ray workers; ``finalize`` is not used there)."""
    return build_plan(IncarTurnsConfig.model_validate(config))[0]
