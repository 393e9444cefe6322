"""``todeval run incar-turns``: options, the run, and the scorer's table at the end."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval.benchmarks._turns.command import execute_run
from todeval.benchmarks._turns.options import add_common_arguments, common_config
from todeval.benchmarks._turns.plan import PREDICTIONS_FILE
from todeval.benchmarks.incar_turns.profile import PROFILE
from todeval.benchmarks.incar_turns.run import (
    METRIC_PREFIX,
    SPEC,
    IncarTurnsConfig,
    Scorer,
)
from todeval.core import safejson


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, "incar-turns")
    parser.add_argument(
        "--split", choices=["test", "dev"], default="test", help="KVRET split (default test)"
    )


def _table(scored: Scorer, out: Path, config: IncarTurnsConfig) -> str:
    from todeval.scoring.incar import evaluate, format_table

    if scored.result is None:  # an already complete run: score its prediction file again
        predictions = out / PREDICTIONS_FILE
        if not predictions.exists():
            return "no dialogue was generated: nothing to score"
        raw = safejson.loads(predictions.read_text(encoding="utf-8"))
        if not raw:
            return "no dialogue was generated: nothing to score"
        scored.result = evaluate(raw, config.split, seed=config.seed, resamples=config.resamples)
    return format_table(scored.result)


def run_command(args: argparse.Namespace) -> int:
    config = IncarTurnsConfig(**common_config(args), split=args.split)
    return execute_run(
        args,
        config,
        SPEC,
        profile=PROFILE,
        selection=f"{config.split} dialogues",
        turns_word="turns",
        metric_prefix=METRIC_PREFIX,
        table=lambda out, scorer: _table(scorer, out, config),
    )
