"""``todeval run clarq``: ClarQ-LLM self-play through the shared runner, or a provider panel
(``--providers rule,llm=<spec> [--seekers oracle,llm=<spec>]``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval.agents.channels import CHANNELS
from todeval.benchmarks.clarq._report import format_summary
from todeval.benchmarks.clarq._scoring import ClarqSummary
from todeval.benchmarks.clarq._tasks import SPLITS
from todeval.benchmarks.clarq._text import LANGUAGES
from todeval.benchmarks.clarq.profile import PROFILE
from todeval.benchmarks.clarq.protocol import MAX_MESSAGES, PROTOCOLS
from todeval.benchmarks.clarq.providers import PROVIDERS
from todeval.benchmarks.clarq.run import SPEC, ClarqConfig
from todeval.benchmarks.clarq.seekers import SEEKER_MODES, SEEKERS
from todeval.console.tables import usage_table
from todeval.driver import RunCommand, drive, run_settings
from todeval.errors import UsageError
from todeval.panels.cli import add_panel_arguments
from todeval.panels.run import panel_roles
from todeval.runner.execute import RunResult
from todeval.runner.files import models_file_digest
from todeval.runner.options import (
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``todeval run clarq``."""
    parser.add_argument("--lang", choices=LANGUAGES, default="en", help="task language (en)")
    parser.add_argument(
        "--tasks",
        choices=SPLITS,
        default="test",
        help="test (types 1-26, 260 tasks) or dev (27-31, no purposes: not comparable)",
    )
    parser.add_argument(
        "--seeker",
        default="oracle",
        help=f"the seeker under test: {', '.join(SEEKERS)} or package.module:Class (oracle)",
    )
    parser.add_argument(
        "--provider",
        default="rule",
        help=f"the provider (Jax): {', '.join(PROVIDERS)} or package.module:Class (rule)",
    )
    models = parser.add_argument_group("models (LLM players and the judge)")
    models.add_argument(
        "--seeker-model",
        metavar="SPEC",
        help="model of --seeker llm: openai:<model>@<url>, llamacpp:smollm2, scripted:<file>, "
        "or a models-file name",
    )
    models.add_argument(
        "--seeker-mode",
        choices=SEEKER_MODES,
        default="completion",
        help="completion: the history in one prompt ending with 'You:' (default); chat: "
        "system = background, alternating turns",
    )
    models.add_argument(
        "--seeker-replay",
        metavar="PATH",
        help="what --seeker replay replays: a clarq run directory or a released result file",
    )
    models.add_argument(
        "--seeker-url",
        metavar="URL",
        help="--seeker agent: the chat endpoint of the external agent playing the seeker",
    )
    models.add_argument(
        "--channel",
        default=None,
        choices=CHANNELS,
        help="--seeker agent: the shape of its chat endpoint (default openai-chat)",
    )
    models.add_argument("--provider-model", metavar="SPEC", help="model of an LLM provider")
    models.add_argument(
        "--judge-model",
        metavar="SPEC",
        help="judge for verdicts no cache holds (default: the recorded verdicts, then the "
        "release record: a response never released is not conveyed)",
    )
    models.add_argument("--models-file", metavar="FILE", help="TOML or YAML file of named models")
    add_generation_arguments(models, constrained_help="schema-constrained provider replies")
    parser.add_argument(
        "--max-messages",
        type=int,
        default=MAX_MESSAGES,
        metavar="N",
        help=f"stop once the transcript holds more than N messages (default {MAX_MESSAGES}, the "
        "protocol's; lower only for smoke tests)",
    )
    add_run_arguments(
        parser,
        unit="tasks",
        ids_flag="--task-ids",
        default_out="runs/clarq-<lang>-<set>-<seeker>-<provider>-s<seed>",
        protocols=PROTOCOLS,
        prompts=True,
    )
    add_panel_arguments(
        parser,
        panel_roles(PROFILE),
        varied_example="rule,llm=<spec>,llm-multi=<spec>",
        subject_example="oracle,wrong,llm=<spec>",
        title="provider panels",
    )


def _config(args: argparse.Namespace) -> ClarqConfig:
    if args.max_messages < 2:
        raise UsageError("--max-messages must be at least 2")
    return ClarqConfig(
        lang=args.lang,
        task_set=args.tasks,
        seeker=args.seeker,
        seeker_model=args.seeker_model,
        seeker_mode=args.seeker_mode,
        seeker_replay=args.seeker_replay,
        seeker_url=args.seeker_url,
        seeker_channel=args.channel,
        provider=args.provider,
        provider_model=args.provider_model,
        judge_model=args.judge_model,
        models_file=args.models_file,
        models_file_sha256=models_file_digest(args.models_file),
        max_messages=args.max_messages,
        **run_settings(args),
        **generation_settings(args),
    )


def _closing(result: RunResult, out: Path) -> str:
    summary = result.summary
    if not isinstance(summary, ClarqSummary):  # read back from disk as the shared model
        summary = ClarqSummary.model_validate_json(
            (out / "summary.json").read_text(encoding="utf-8")
        )
    parts = [format_summary(summary)]
    usage = usage_table(summary)
    if usage:
        parts.append("\n" + usage)
    parts.append(f"\nrun directory: {out}")
    return "\n".join(parts)


COMMAND: RunCommand[ClarqConfig] = RunCommand(
    profile=PROFILE,
    build=SPEC.plan,
    start_line=lambda config, plan: (
        f"clarq {config.selection_name}: {plan.n_tasks} tasks x {config.trials} trial(s), "
        f"seeker {config.seeker}, provider {config.provider}, protocol {config.protocol}"
    ),
    closing=_closing,
    warnings=lambda plan: plan.players.get("warnings", []),
    panel_parts=lambda config: ("clarq", config.lang, config.task_set),
    panel_ids=lambda config: config.ids,
)


def run_command(args: argparse.Namespace) -> int:
    return drive(args, _config(args), COMMAND)


__all__ = ["add_arguments", "run_command"]
