"""Build the run plan of ``incar-turns``: one episode per KVRET dialogue, corpus scoring.

Each turn is generated from the gold history, the dialogue's intent and its knowledge base;
``finalize`` writes the predictions in the scorer's format (``predictions.json`` in the run
directory), scores them with :mod:`todeval.scoring.incar` and returns the scorer's summary plus
the format-failure rate and usage totals. The shared machinery is
:mod:`todeval.benchmarks._turns`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from todeval.benchmarks._turns.generation import PredictedTurn, failed_turn
from todeval.benchmarks._turns.options import TurnsConfig
from todeval.benchmarks._turns.plan import Predictions, ReplyFormat, TurnsSpec, turns_benchmark
from todeval.benchmarks._turns.summaries import GenerationStats
from todeval.benchmarks.incar_turns.corpus import IncarDialogue, load_dialogues
from todeval.benchmarks.incar_turns.prompts import (
    PACKAGE,
    PROMPT_VERSION,
    messages,
    reply_schema,
)
from todeval.core.records import Summary
from todeval.dialogue.reply import JsonReply
from todeval.scoring.incar import (
    MAX_RESPONSE_CHARS,
    MAX_STATE_CHARS,
    IncarResult,
    Split,
    load_gold,
    load_lexicon,
    parse_predictions,
    score_predictions,
)

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


class Scorer:
    """GALAXY's In-Car scorer over a run's predictions; the last scoring is kept for the CLI's
    table."""

    def __init__(self, config: IncarTurnsConfig) -> None:
        self.config = config
        self.lexicon = load_lexicon()
        self.gold = load_gold(config.split, self.lexicon)
        self.forms = {intent: ReplyFormat.of(reply_schema(intent)) for intent in INTENTS}
        self.result: IncarResult | None = None

    def reply_format(self, dialogue: Any) -> ReplyFormat:
        return self.forms[dialogue.intent]

    def __call__(self, predictions: Predictions, source: Path | None) -> Summary:
        if not predictions:
            self.result = None
            return Summary(benchmark=BENCHMARK, n_episodes=0, outcomes={}, metrics={})
        parsed = parse_predictions(predictions, self.gold)
        self.result = score_predictions(
            parsed, self.gold, lexicon=self.lexicon, seed=self.config.seed,
            resamples=self.config.resamples,
        )  # fmt: skip
        return self.result.summary


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


TURNS: TurnsSpec[IncarDialogue] = TurnsSpec(
    benchmark=BENCHMARK,
    metric_prefix=METRIC_PREFIX,
    prompts_package=PACKAGE,
    summary_type=IncarTurnsSummary,
    prediction_fields=("response", "state"),
    group=lambda d: d.intent,
    messages=messages,
    to_turn=_to_turn,
    task_key=lambda d: [d.dialogue_id, d.intent, d.rows, [[t.users, t.response] for t in d.turns]],
    details=lambda d: {"intent": d.intent},
)


def _dialogues(config: IncarTurnsConfig) -> list[IncarDialogue]:
    return load_dialogues(config.split, load_gold(config.split, load_lexicon()))


SCORER_VERSION = "1"
"""The version of this benchmark's scoring (the format-failure rule and the KVRET (in-car) corpus
scorer over the predictions): bump it with any change that moves a stored run's figures."""


SPEC = turns_benchmark(
    TURNS,
    config=IncarTurnsConfig,
    reference="todeval.benchmarks.incar_turns.run:SPEC",
    load=_dialogues,
    task_set=lambda config: config.split,
    canonical=lambda i: i.strip(),
    scorer=Scorer,
    scorer_version=SCORER_VERSION,
)
"""In-Car context-to-response generation, declared."""
