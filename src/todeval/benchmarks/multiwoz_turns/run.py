"""Build the run plan of ``multiwoz-turns``: one episode per test dialogue, corpus scoring.

Each dialogue's system turns are generated from the gold history (context-to-response); the
episode record keeps the predicted turns in ``details.turns``. ``finalize`` writes them as a
prediction file in the community format (``predictions.json`` in the run directory), scores it
with :func:`todeval.scoring.multiwoz.evaluate` and returns the scorer's summary plus the
format-failure rate and usage totals. The shared machinery is :mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from todeval.benchmarks._turns.generation import PredictedTurn, failed_turn
from todeval.benchmarks._turns.options import RuntimeOptions, TurnsConfig
from todeval.benchmarks._turns.plan import (
    Predictions,
    ReplyFormat,
    TurnsSpec,
    build_turns_plan,
)
from todeval.benchmarks._turns.summaries import GenerationStats
from todeval.benchmarks.multiwoz_turns.corpus import (
    MultiwozDialogue,
    canonical_id,
    load_dialogues,
)
from todeval.benchmarks.multiwoz_turns.prompts import (
    PACKAGE,
    PROMPT_VERSION,
    messages,
    reply_schema,
)
from todeval.core.records import Summary
from todeval.dialogue.chat import JsonReply
from todeval.runner.plan import RunPlan
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


def _to_turn(reply: JsonReply, previous: PredictedTurn | None) -> PredictedTurn:
    if reply.value is None:
        return failed_turn(reply, previous, active_domains=[])
    value = reply.value
    return PredictedTurn(
        response=value["response"],
        state=value["state"],
        active_domains=list(value["active_domains"]),
    )


SPEC: TurnsSpec[MultiwozDialogue] = TurnsSpec(
    benchmark=BENCHMARK,
    metric_prefix=METRIC_PREFIX,
    factory="todeval.benchmarks.multiwoz_turns.run:plan_from_config",
    prompts_package=PACKAGE,
    summary_type=MultiwozTurnsSummary,
    prediction_fields=("response", "state", "active_domains"),
    group=lambda d: d.group,
    messages=messages,
    to_turn=_to_turn,
    task_key=lambda d: [d.dialogue_id, d.users, d.systems],
)


def build_plan(
    config: MultiwozTurnsConfig,
    runtime: RuntimeOptions | None = None,
    scored: Scored | None = None,
) -> tuple[RunPlan, list[MultiwozDialogue]]:
    """The run plan; ``scored`` (if given) receives the final scoring for the CLI's table."""
    into = scored if scored is not None else Scored()
    corpus = CorpusData()
    form = ReplyFormat.of(reply_schema())

    def score(predictions: Predictions, source: Path | None) -> Summary | None:
        if not predictions:
            into.result = into.summary = None
            return None
        result = evaluate(
            predictions,
            active_domains=config.active_domains,
            corpus=corpus,
            database=VenueDatabase(),
        )
        if source is not None:
            result = result.model_copy(update={"source": str(source)})
        summary = to_summary(result, seed=config.seed, resamples=config.resamples)
        into.result, into.summary = result, summary
        return summary

    return build_turns_plan(
        SPEC,
        config,
        runtime or RuntimeOptions(),
        load_dialogues(corpus),
        task_set="test",
        canonical=canonical_id,
        reply_format=lambda d: form,
        score=score,
    )


def plan_from_config(config: dict[str, Any], runtime: RuntimeOptions | None = None) -> RunPlan:
    """Rebuild a plan from its recorded config (Ray workers, the Python API)."""
    return build_plan(MultiwozTurnsConfig.model_validate(config), runtime)[0]
