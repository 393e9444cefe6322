"""``todeval run multiwoz-turns``: options, the run, and the scorer's table at the end."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval.benchmarks._turns.command import execute_run
from todeval.benchmarks._turns.options import add_common_arguments, common_config
from todeval.benchmarks._turns.plan import PREDICTIONS_FILE
from todeval.benchmarks.multiwoz_turns.profile import PROFILE
from todeval.benchmarks.multiwoz_turns.run import (
    METRIC_PREFIX,
    SPEC,
    MultiwozTurnsConfig,
    Scorer,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, "multiwoz-turns")
    parser.add_argument(
        "--active-domains",
        choices=["given", "state", "placeholders"],
        default="given",
        help="scoring: where each turn's active domains come from -- the model's own (given, "
        "default), estimated from state changes (state), or slot-prefixed placeholders",
    )


def _table(scored: Scorer, out: Path, config: MultiwozTurnsConfig) -> str:
    from todeval.scoring.multiwoz import evaluate, format_table, to_summary

    if scored.result is None or scored.summary is None:  # an already complete run: re-score
        predictions = out / PREDICTIONS_FILE
        if not predictions.exists():
            return "no dialogue was generated: nothing to score"
        scored.result = evaluate(predictions, active_domains=config.active_domains)
        scored.summary = to_summary(scored.result, seed=config.seed, resamples=config.resamples)
    return format_table(scored.result, scored.summary)


def run_command(args: argparse.Namespace) -> int:
    config = MultiwozTurnsConfig(**common_config(args), active_domains=args.active_domains)
    return execute_run(
        args,
        config,
        SPEC,
        profile=PROFILE,
        selection="dialogues",
        turns_word="system turns",
        metric_prefix=METRIC_PREFIX,
        table=lambda out, scorer: _table(scorer, out, config),
    )
