"""``todeval run toy`` (one run, or a panel: ``--guessers bisect,random --hosts rule,vague``)
and ``todeval toy tasks``."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval_toy.game import GUESSER, HOST, PROTOCOLS, load_tasks
from todeval_toy.profile import PROFILE
from todeval_toy.run import ToyConfig, build_plan

from todeval.console.tables import summary_table
from todeval.panels.cli import add_panel_arguments, members_from_args
from todeval.panels.members import assign_by_field, member_by_field
from todeval.panels.run import default_panel_out, panel_roles, run_panel
from todeval.runner.command import execute_from_args
from todeval.runner.execute import RunResult
from todeval.runner.options import (
    RuntimeOptions,
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
    run_settings,
    runtime_options,
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


def _execute(config: ToyConfig, out: Path, args: argparse.Namespace) -> RunResult:
    plan = build_plan(config, runtime_options(args, out))
    start = f"toy: {plan.n_tasks} tasks x {config.trials}, guesser {config.guesser}"
    return execute_from_args(plan, out, args, start_line=f"{start}, host {config.host}")


def run_command(args: argparse.Namespace) -> int:
    config = ToyConfig(
        guesser=args.guesser,
        host=args.host,
        guesser_model=args.guesser_model,
        **run_settings(args),
        **generation_settings(args),
    )
    members = members_from_args(args, panel_roles(PROFILE), lambda r: member_by_field(config, r))
    if members is not None:
        run_panel(
            PROFILE,
            config,
            members,
            assign=assign_by_field,
            check=lambda c: build_plan(c, RuntimeOptions(cache=False)),
            execute=lambda c, run_dir: _execute(c, run_dir, args),
            out=Path(
                args.out or default_panel_out(members.subjects, config, "toy", ids=config.ids)
            ),
            show=not args.quiet,
        )
        return 0
    out = Path(args.out or config.default_out())
    result = _execute(config, out, args)
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
