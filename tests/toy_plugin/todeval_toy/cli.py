"""``todeval run toy`` (one run, or a panel: ``--guessers bisect,random --hosts rule,vague``)
and ``todeval toy tasks``."""

from __future__ import annotations

import argparse

from todeval_toy.game import GUESSER, HOST, PROTOCOLS, load_tasks
from todeval_toy.profile import PROFILE
from todeval_toy.run import ToyConfig, build_plan

from todeval.driver import RunCommand, drive
from todeval.panels.cli import add_panel_arguments
from todeval.panels.run import panel_roles
from todeval.runner.options import (
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
    run_settings,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = ", ".join(GUESSER.builtins)
    parser.add_argument("--guesser", default="bisect", help=f"{names} or package.module:Class")
    hosts = ", ".join(HOST.builtins)
    parser.add_argument("--host", default="rule", help=f"{hosts} or package.module:Class")
    parser.add_argument("--guesser-model", metavar="SPEC", help="model of --guesser llm")
    add_generation_arguments(parser, constrained_help="have the backend enforce the JSON reply")
    add_run_arguments(
        parser, default_out="runs/toy-<guesser>-s<seed>", protocols=PROTOCOLS, prompts=True
    )
    add_panel_arguments(  # --hosts, --guessers, --panel FILE
        parser,
        panel_roles(PROFILE),
        varied_example=f"{','.join(HOST.builtins)}",
        subject_example="bisect,random,llm=<spec>",
    )


COMMAND: RunCommand[ToyConfig] = RunCommand(
    profile=PROFILE,
    build=build_plan,
    start_line=lambda config, plan: (
        f"toy: {plan.n_tasks} tasks x {config.trials}, guesser {config.guesser}, host {config.host}"
    ),
    panel_parts=lambda config: ("toy",),
    panel_ids=lambda config: config.ids,
)


def run_command(args: argparse.Namespace) -> int:
    config = ToyConfig(
        guesser=args.guesser,
        host=args.host,
        guesser_model=args.guesser_model,
        **run_settings(args),
        **generation_settings(args),
    )
    return drive(args, config, COMMAND)  # one run or a panel, and what is printed


def add_tasks_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secrets", action="store_true", help="also print each secret")


def tasks_command(args: argparse.Namespace) -> int:
    for t in load_tasks():
        secret = f"  secret {t.secret}" if args.secrets else ""
        print(f"{t.task_id}  {t.group}  1..{t.high}  {t.max_guesses} guesses{secret}")
    return 0
