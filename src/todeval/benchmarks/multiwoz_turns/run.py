"""Build the run plan of ``multiwoz-turns``: one episode per test dialogue, corpus scoring.

Each dialogue's system turns are generated from the gold history (context-to-response); the
episode record keeps the predicted turns in ``details.turns``. ``finalize`` writes them as a
prediction file in the community format (``predictions.json`` in the run directory), scores it
with :func:`todeval.scoring.multiwoz.evaluate` and returns the scorer's summary plus the
format-failure rate and usage totals. The shared machinery is :mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from todeval.benchmarks._turns.generation import PredictedTurn, failed_turn
from todeval.benchmarks._turns.options import TurnsConfig
from todeval.benchmarks._turns.plan import (
    Predictions,
    ReplyFormat,
    TurnsSpec,
    turns_benchmark,
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
from todeval.dialogue.reply import JsonReply
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


class Scorer:
    """The MultiWOZ evaluator over a run's predictions; the last scoring is kept for the CLI's
    table."""

    def __init__(self, config: MultiwozTurnsConfig) -> None:
        self.config = config
        self.corpus = CorpusData()
        self.form = ReplyFormat.of(reply_schema())
        self.result: MultiwozResult | None = None
        self.summary: MultiwozSummary | None = None

    def reply_format(self, dialogue: Any) -> ReplyFormat:
        return self.form

    def __call__(self, predictions: Predictions, source: Path | None) -> Summary | None:
        if not predictions:
            self.result = self.summary = None
            return None
        result = evaluate(
            predictions,
            active_domains=self.config.active_domains,
            corpus=self.corpus,
            database=VenueDatabase(),
        )
        if source is not None:
            result = result.model_copy(update={"source": str(source)})
        summary = to_summary(result, seed=self.config.seed, resamples=self.config.resamples)
        self.result, self.summary = result, summary
        return summary


def _to_turn(reply: JsonReply, previous: PredictedTurn | None) -> PredictedTurn:
    if reply.value is None:
        return failed_turn(reply, previous, active_domains=[])
    value = reply.value
    return PredictedTurn(
        response=value["response"],
        state=value["state"],
        active_domains=list(value["active_domains"]),
    )


TURNS: TurnsSpec[MultiwozDialogue] = TurnsSpec(
    benchmark=BENCHMARK,
    metric_prefix=METRIC_PREFIX,
    prompts_package=PACKAGE,
    summary_type=MultiwozTurnsSummary,
    prediction_fields=("response", "state", "active_domains"),
    group=lambda d: d.group,
    messages=messages,
    to_turn=_to_turn,
    task_key=lambda d: [d.dialogue_id, d.users, d.systems],
)


SCORER_VERSION = "1"
"""The version of this benchmark's scoring (the format-failure rule and the MultiWOZ corpus
scorer over the predictions): bump it with any change that moves a stored run's figures."""


SPEC = turns_benchmark(
    TURNS,
    config=MultiwozTurnsConfig,
    reference="todeval.benchmarks.multiwoz_turns.run:SPEC",
    load=lambda config: load_dialogues(CorpusData()),
    task_set=lambda config: "test",
    canonical=canonical_id,
    scorer=Scorer,
    scorer_version=SCORER_VERSION,
)
"""MultiWOZ context-to-response generation, declared."""
