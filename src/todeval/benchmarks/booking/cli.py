"""CLI commands of the booking benchmark: ``todeval run booking`` and ``todeval data check``."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from todeval.agents.channels import CHANNELS
from todeval.benchmarks.booking.audit import audit_task
from todeval.benchmarks.booking.players import SYSTEMS, USERS
from todeval.benchmarks.booking.profile import PROFILE
from todeval.benchmarks.booking.run import PROTOCOLS, SPEC, BookingConfig
from todeval.benchmarks.booking.tasks import TASK_SETS, load_tasks, select_tasks
from todeval.console.tables import render_rows, summary_table, usage_table
from todeval.driver import RunCommand, drive, run_settings
from todeval.errors import BadInputError, UsageError, choice_error
from todeval.panels.cli import add_panel_arguments
from todeval.panels.run import panel_roles
from todeval.runner.execute import RunResult
from todeval.runner.files import models_file_digest
from todeval.runner.options import (
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
)

HEADLINE = [
    "booking.booking_accuracy",
    "booking.inform",
    "booking.attributes",
    "booking.aborted",
    "booking.turn_cap",
    "booking.violations_per_turn",
    "booking.turns",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``todeval run booking``."""
    parser.add_argument(
        "--tasks", default="test", help=f"task set: {', '.join(TASK_SETS)} (default test)"
    )
    parser.add_argument(
        "--domain",
        default=None,
        metavar="PACK",
        help="play a domain pack's tasks instead (a pack folder or a shipped pack's name; "
        "docs/own-domain.md)",
    )
    parser.add_argument(
        "--domain-tasks",
        default=None,
        metavar="FILE",
        help="--domain: a task file drawn from the pack (default: the pack's tasks.json)",
    )
    parser.add_argument(
        "--system",
        default="rule",
        help=f"system under test: {', '.join(SYSTEMS)} or package.module:Class",
    )
    parser.add_argument(
        "--user",
        default="agenda",
        help=f"user simulator: {', '.join(USERS)} or package.module:Class",
    )
    add_run_arguments(
        parser,
        unit="tasks",
        ids_flag="--task-ids",
        default_out="runs/booking-<set>-<system>-<user>-s<seed>",
        protocols=PROTOCOLS,
        prompts=True,
    )
    parser.add_argument(
        "--on-violation",
        choices=["abort", "reprompt"],
        default="abort",
        help="abort on a format violation (the paper's rule) or reprompt once",
    )
    models = parser.add_argument_group("models (LLM players)")
    models.add_argument(
        "--system-model",
        default=None,
        metavar="SPEC",
        help="model of an LLM system: openai:<model>@<url>, llamacpp:smollm2, "
        "llamacpp:<file.gguf>, scripted:<file>, or a models-file name",
    )
    models.add_argument("--user-model", default=None, metavar="SPEC", help="model of --user llm")
    models.add_argument(
        "--transcripts",
        default=None,
        metavar="RUN_DIR",
        help="--user replay: a booking run directory whose user turns are said again",
    )
    models.add_argument(
        "--module-model",
        default=None,
        metavar="SPEC",
        help="model of the sub-modules of modular systems (default: the system model)",
    )
    models.add_argument(
        "--models-file",
        default=None,
        metavar="FILE",
        help="TOML or YAML file of named models (prices, sizes, limits, generation args)",
    )
    models.add_argument(
        "--system-url",
        default=None,
        metavar="URL",
        help="endpoint of an --system http system, or the chat endpoint of an --system agent",
    )
    models.add_argument(
        "--channel",
        default=None,
        choices=CHANNELS,
        help="--system agent: the shape of its chat endpoint (default openai-chat)",
    )
    models.add_argument(
        "--system-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="--system http|agent: seconds to wait for each request (default 60 for http, "
        "300 for agent); no answer in time is the system's error",
    )
    models.add_argument(
        "--few-shot",
        type=int,
        default=None,
        metavar="N",
        help="--system hd-pipeline: retrieved examples per prompt (default 2; 0 disables)",
    )
    add_generation_arguments(
        models, constrained_help="schema-constrained decoding where the backend supports it"
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        default=15,
        help="user-turn cap (default 15, the protocol's; lower only for smoke tests)",
    )
    parser.add_argument(
        "--max-calls-per-turn",
        type=int,
        default=15,
        help="system outputs per user turn (default 15, the protocol's)",
    )
    add_panel_arguments(
        parser,
        panel_roles(PROFILE),
        varied_example="agenda,corpus,llm=<spec>,...",
        subject_example="rule,monolithic=<spec>,...",
        file_aliases=("--users-file",),
        title="simulator panels",
    )


def _positive(value: float | None, flag: str) -> float | None:
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise UsageError(f"{flag} must be a positive number of seconds")
    return value


def _few_shot(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise UsageError("--few-shot must be 0 or more")
    return value


def _domain(args: argparse.Namespace) -> dict[str, str | None]:
    """The config fields of --domain and --domain-tasks (paths resolved, the pack hashed)."""
    if args.domain is None:
        if args.domain_tasks is not None:
            raise UsageError("--domain-tasks is for --domain PACK")
        return {}
    from todeval.benchmarks.booking.domains.cli import pack_folder, shipped_packs

    folder = pack_folder(args.domain)
    shipped = args.domain in shipped_packs() and not Path(args.domain).is_dir()
    tasks = args.domain_tasks
    if tasks is not None and not Path(tasks).is_file():
        raise BadInputError(f"{tasks}: no such task file")
    return {
        "domain": args.domain if shipped else str(folder),
        "domain_tasks": str(Path(tasks).resolve()) if tasks else None,
    }


def _config(args: argparse.Namespace) -> BookingConfig:
    if args.tasks not in TASK_SETS:
        raise choice_error("task set", args.tasks, list(TASK_SETS))
    domain = _domain(args)
    settings = run_settings(args)
    return BookingConfig(
        **generation_settings(args),
        system_model=args.system_model,
        user_model=args.user_model,
        user_transcripts=str(Path(args.transcripts).resolve()) if args.transcripts else None,
        module_model=args.module_model,
        models_file=args.models_file,
        models_file_sha256=models_file_digest(args.models_file),
        system_url=args.system_url,
        system_channel=args.channel,
        system_timeout_s=_positive(args.system_timeout, "--system-timeout"),
        few_shot=_few_shot(args.few_shot),
        task_set=args.tasks,
        task_ids=settings.pop("ids"),
        system=args.system,
        user=args.user,
        on_violation=args.on_violation,
        max_turns=args.max_turns,
        max_calls_per_turn=args.max_calls_per_turn,
        **domain,
        **settings,
    )


def _closing(result: RunResult, out: Path) -> str:
    pass_k = sorted(m for m in result.summary.metrics if ".pass^" in m)
    headline = [*HEADLINE[:1], *pass_k, *HEADLINE[1:]]
    parts = [summary_table(result.summary, headline, by_group=["booking.booking_accuracy"])]
    usage = usage_table(result.summary)
    if usage:
        parts.append("\n" + usage)
    parts.append(f"\nrun directory: {out}")
    return "\n".join(parts)


COMMAND: RunCommand[BookingConfig] = RunCommand(
    profile=PROFILE,
    build=SPEC.plan,
    start_line=lambda config, plan: (
        f"booking: {plan.n_tasks} tasks x {config.trials} trial(s), system {config.system}, "
        f"user {config.user}, seed {config.seed}"
    ),
    closing=_closing,
    panel_parts=lambda config: (config.task_set,),
    panel_ids=lambda config: config.task_ids,
)


def run_command(args: argparse.Namespace) -> int:
    return drive(args, _config(args), COMMAND)


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=["test", "dev", "synthetic", "unrealistic"],
        help="task sets to audit (default: all four)",
    )
    parser.add_argument("--task-ids", nargs="+", default=None, metavar="ID")
    parser.add_argument("--verbose", action="store_true", help="one line per goal")


def check_command(args: argparse.Namespace) -> int:
    rows = []
    for task_set in args.tasks:
        if task_set not in TASK_SETS:
            raise choice_error("task set", task_set, list(TASK_SETS))
    for task_set in args.tasks:
        tasks = load_tasks(task_set)
        if args.task_ids:
            tasks = select_tasks(tasks, args.task_ids)
        audits = [audit_task(t) for t in tasks]
        feasible = sum(a.feasible for a in audits)
        rows.append(
            [task_set, str(len(audits)), str(feasible), f"{feasible / max(len(audits), 1):.3f}"]
        )
        infeasible = [a for a in audits if not a.feasible]
        print(f"== {task_set}: {feasible}/{len(audits)} goals bookable by a perfect system")
        for a in audits if args.verbose else infeasible:
            parts = "; ".join(
                f"{d.domain}: {d.matching_rows} row(s)" + ("" if d.bookable else f", {d.problem}")
                for d in a.domains
            )
            print(f"  {'ok ' if a.feasible else 'NO '} {a.task_id} [{a.group}] {parts}")
    print()
    print(render_rows(["task set", "goals", "feasible", "share"], rows))
    return 0
