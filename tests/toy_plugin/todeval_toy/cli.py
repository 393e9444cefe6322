"""``todeval run toy`` and ``todeval toy tasks``."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval_toy.game import GUESSER, PROTOCOLS, load_tasks
from todeval_toy.run import ToyConfig, build_plan

from todeval.console.tables import summary_table
from todeval.runner.command import execute_from_args
from todeval.runner.options import (
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
    run_settings,
    runtime_options,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = ", ".join(GUESSER.builtins)
    parser.add_argument("--guesser", default="bisect", help=f"{names} or package.module:Class")
    parser.add_argument("--host", default="rule", help="rule or package.module:Class")
    parser.add_argument("--guesser-model", metavar="SPEC", help="model of --guesser llm")
    add_generation_arguments(parser, constrained_help="have the backend enforce the JSON reply")
    add_run_arguments(
        parser, default_out="runs/toy-<guesser>-s<seed>", protocols=PROTOCOLS, prompts=True
    )


def run_command(args: argparse.Namespace) -> int:
    config = ToyConfig(
        guesser=args.guesser,
        host=args.host,
        guesser_model=args.guesser_model,
        **run_settings(args),
        **generation_settings(args),
    )
    out = Path(args.out or config.default_out())
    plan = build_plan(config, runtime_options(args, out))
    start = f"toy: {plan.n_tasks} tasks x {config.trials}, guesser {config.guesser}"
    result = execute_from_args(plan, out, args, start_line=start)
    if not args.quiet:
        print(summary_table(result.summary))
    return 0


def add_tasks_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secrets", action="store_true", help="also print each secret")


def tasks_command(args: argparse.Namespace) -> int:
    for t in load_tasks():
        secret = f"  secret {t.secret}" if args.secrets else ""
        print(f"{t.task_id}  {t.group}  1..{t.high}  {t.max_guesses} guesses{secret}")
    return 0
