"""``todeval run incar-turns``: options, the run, and the scorer's table at the end."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from todeval.benchmarks.incar_turns.run import (
    PREDICTIONS_FILE,
    IncarTurnsConfig,
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
    add_common_arguments(parser, "incar-turns")
    parser.add_argument(
        "--split", choices=["test", "dev"], default="test", help="KVRET split (default test)"
    )


def _table(scored: Scored, out: Path, config: IncarTurnsConfig) -> str:
    from todeval.scoring.incar import evaluate, format_table

    if scored.result is None:  # an already complete run: score its prediction file again
        predictions = out / PREDICTIONS_FILE
        if not predictions.exists():
            return "no dialogue was generated: nothing to score"
        raw = json.loads(predictions.read_text(encoding="utf-8"))
        if not raw:
            return "no dialogue was generated: nothing to score"
        scored.result = evaluate(raw, config.split, seed=config.seed, resamples=config.resamples)
    return format_table(scored.result)


def run_command(args: argparse.Namespace) -> int:
    config = IncarTurnsConfig(**common_config(args), split=args.split)
    out = Path(args.out or config.default_out())
    scored = Scored()
    plan, dialogues = build_plan(config, runtime_options(args, out), scored)
    if not args.quiet:
        turns = sum(d.n_turns for d in dialogues)
        print(
            f"incar-turns: {len(dialogues)} {config.split} dialogues ({turns} turns), model "
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
    print(run_footer(result.summary, out, PREDICTIONS_FILE, "incar"))
    return 0
