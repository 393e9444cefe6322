"""Build the run plan of ``incar-turns``: one episode per KVRET dialogue, corpus scoring.

Each turn is generated from the gold history, the dialogue's intent and its knowledge base;
``finalize`` writes the predictions in the scorer's format (``predictions.json`` in the run
directory), scores them with :mod:`todeval.scoring.incar` and returns the scorer's summary plus
the format-failure rate and usage totals. The shared machinery is
:mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from todeval.benchmarks._turns.generation import PredictedTurn, failed_turn
from todeval.benchmarks._turns.options import RuntimeOptions, TurnsConfig
from todeval.benchmarks._turns.plan import Predictions, ReplyFormat, TurnsSpec, build_turns_plan
from todeval.benchmarks._turns.summaries import GenerationStats
from todeval.benchmarks.incar_turns.corpus import IncarDialogue, load_dialogues
from todeval.benchmarks.incar_turns.prompts import (
    PACKAGE,
    PROMPT_VERSION,
    messages,
    reply_schema,
)
from todeval.core.records import Summary
from todeval.dialogue.chat import JsonReply
from todeval.runner.plan import RunPlan
from todeval.scoring.incar import (
    IncarResult,
    Split,
    load_gold,
    load_lexicon,
    parse_predictions,
    score_predictions,
)
from todeval.scoring.incar._predictions import MAX_RESPONSE_CHARS, MAX_STATE_CHARS

BENCHMARK = "incar-turns"
METRIC_PREFIX = "incar"
INTENTS = ("schedule", "navigate", "weather")


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


def _too_long(value: dict[str, Any]) -> str | None:
    """Why a schema-valid reply still cannot be scored (the scorer's length limits)."""
    if len(value["response"]) > MAX_RESPONSE_CHARS:
        return f"response longer than {MAX_RESPONSE_CHARS:,} characters"
    if any(len(v) > MAX_STATE_CHARS for v in value["state"].values()):
        return f"state value longer than {MAX_STATE_CHARS} characters"
    return None


def _to_turn(reply: JsonReply, previous: PredictedTurn | None) -> PredictedTurn:
    if reply.value is None:
        return failed_turn(reply, previous)
    problem = _too_long(reply.value)
    if problem is not None:  # a format failure of this turn, not a file the scorer refuses
        return failed_turn(reply.model_copy(update={"format_error": problem}), previous)
    return PredictedTurn(response=reply.value["response"], state=reply.value["state"])


SPEC: TurnsSpec[IncarDialogue] = TurnsSpec(
    benchmark=BENCHMARK,
    metric_prefix=METRIC_PREFIX,
    factory="todeval.benchmarks.incar_turns.run:plan_from_config",
    prompts_package=PACKAGE,
    summary_type=IncarTurnsSummary,
    prediction_fields=("response", "state"),
    group=lambda d: d.intent,
    messages=messages,
    to_turn=_to_turn,
    task_key=lambda d: [d.dialogue_id, d.intent, d.rows, [[t.users, t.response] for t in d.turns]],
    details=lambda d: {"intent": d.intent},
)


def build_plan(
    config: IncarTurnsConfig,
    runtime: RuntimeOptions | None = None,
    scored: Scored | None = None,
) -> tuple[RunPlan, list[IncarDialogue]]:
    """The run plan; ``scored`` (if given) receives the final scoring for the CLI's table."""
    into = scored if scored is not None else Scored()
    lexicon = load_lexicon()
    gold = load_gold(config.split, lexicon)
    forms = {intent: ReplyFormat.of(reply_schema(intent)) for intent in INTENTS}

    def score(predictions: Predictions, source: Path | None) -> Summary:
        if not predictions:
            into.result = None
            return Summary(benchmark=BENCHMARK, n_episodes=0, outcomes={}, metrics={})
        parsed = parse_predictions(predictions, gold)
        into.result = score_predictions(
            parsed, gold, lexicon=lexicon, seed=config.seed, resamples=config.resamples
        )
        return into.result.summary

    return build_turns_plan(
        SPEC,
        config,
        runtime or RuntimeOptions(),
        load_dialogues(config.split, gold),
        task_set=config.split,
        canonical=lambda i: i.strip(),
        reply_format=lambda d: forms[d.intent],
        score=score,
    )


def plan_from_config(config: dict[str, Any], runtime: RuntimeOptions | None = None) -> RunPlan:
    """Rebuild a plan from its recorded config (Ray workers, the Python API)."""
    return build_plan(IncarTurnsConfig.model_validate(config), runtime)[0]
