"""``todeval run multiwoz-turns``: options, the run, and the scorer's table at the end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from todeval.benchmarks.multiwoz_turns.run import (
    PREDICTIONS_FILE,
    MultiwozTurnsConfig,
    Scored,
    build_plan,
)
from todeval.benchmarks.multiwoz_turns.shared.generation import release_models
from todeval.benchmarks.multiwoz_turns.shared.options import (
    add_common_arguments,
    common_config,
    runtime_options,
)
from todeval.benchmarks.multiwoz_turns.shared.report import run_footer
from todeval.runner.execute import execute_plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, "multiwoz-turns")
    parser.add_argument(
        "--active-domains",
        choices=["given", "state", "placeholders"],
        default="given",
        help="scoring: where each turn's active domains come from -- the model's own (given, "
        "default), estimated from state changes (state), or slot-prefixed placeholders",
    )


def _table(scored: Scored, out: Path, config: MultiwozTurnsConfig) -> str:
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
    out = Path(args.out or config.default_out())
    scored = Scored()
    plan, dialogues = build_plan(config, runtime_options(args, out), scored)
    if not args.quiet:
        turns = sum(d.n_turns for d in dialogues)
        print(
            f"multiwoz-turns: {len(dialogues)} dialogues ({turns} system turns), model "
            f"{config.model}, seed {config.seed} -> {out}",
            file=sys.stderr,
        )
    result = execute_plan(plan, out, max_concurrency=args.max_concurrency, quiet=args.quiet)
    for note in result.notes:
        print(note, file=sys.stderr)
    if result.already_complete:
        release_models(plan)  # nothing ran, so the runner did not release the model
        print(f"{out} already holds a complete run with this config; its scores:")
    print(_table(scored, out, config))
    print(run_footer(result.summary, out, PREDICTIONS_FILE, "multiwoz"))
    return 0
