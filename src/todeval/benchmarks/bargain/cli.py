"""``todeval run bargain --track craigslist|casino --model SPEC | --labeller NAME``
(``--labeller agent --labeller-url URL [--channel ...]``: an external agent)."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval.agents.channels import CHANNELS
from todeval.benchmarks.bargain.data import DEFAULT_K, DISTRACTORS, SPLITS, TRACKS
from todeval.benchmarks.bargain.labellers import LABELLER
from todeval.benchmarks.bargain.profile import PROFILE
from todeval.benchmarks.bargain.run import PROTOCOLS, SPEC, BargainConfig, BargainSummary
from todeval.console.tables import fmt_estimate
from todeval.core.records import Summary
from todeval.driver import RunCommand, drive, run_settings
from todeval.errors import UsageError
from todeval.runner.options import (
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--track",
        choices=list(TRACKS),
        default="craigslist",
        help="craigslist (silver acts), casino (human strategies) or scripted (Problem-Weaver "
        "tasks, constructed intent labels)",
    )
    parser.add_argument(
        "--scripted-set",
        metavar="FILE",
        help="scripted: a set file from 'todeval data bargain --generate' (default: the "
        "shipped 1,000-task template set)",
    )
    parser.add_argument(
        "--distractors",
        choices=list(DISTRACTORS),
        default="uniform",
        help="scripted: candidate distractors uniform over all intents (default) or drawn from "
        "the gold intents' parent first (hard)",
    )
    parser.add_argument(
        "--split",
        choices=list(SPLITS),
        default="test",
        help="casino: the 42 annotated test dialogues (default) or all 396; craigslist has one "
        "set of 181 dialogues",
    )
    names = ", ".join(LABELLER.builtins)
    parser.add_argument(
        "--labeller",
        default=None,
        help=f"{names} or package.module:Class (default: llm with --model)",
    )
    parser.add_argument("--model", metavar="SPEC", help="model of the llm labeller")
    parser.add_argument(
        "--labeller-url",
        metavar="URL",
        help="--labeller agent: the chat endpoint of the external agent labelling the turns",
    )
    parser.add_argument(
        "--channel",
        default=None,
        choices=CHANNELS,
        help="--labeller agent: the shape of its chat endpoint (default openai-chat)",
    )
    parser.add_argument(
        "--k",
        type=int,
        default=DEFAULT_K,
        help=f"candidate-list size (default {DEFAULT_K}; effective min(k, number of labels))",
    )
    parser.add_argument(
        "--candidate-seed",
        type=int,
        default=0,
        help="seed of the candidate lists (default 0, the same for every model)",
    )
    add_generation_arguments(parser, constrained_help="have the backend enforce the JSON reply")
    add_run_arguments(
        parser,
        unit="dialogues",
        ids_flag="--dialogue-ids",
        default_out="runs/bargain-<track>-<labeller>-s<seed>",
        protocols=PROTOCOLS,
        prompts=True,
    )


def config_from_args(args: argparse.Namespace) -> BargainConfig:
    labeller = args.labeller or ("llm" if args.model else None)
    if labeller is None:
        raise UsageError("pass --model SPEC (the llm labeller) or --labeller NAME")
    if args.k < 1:
        raise UsageError("--k must be at least 1")
    return BargainConfig(
        track=args.track,
        split=args.split,
        labeller=labeller,
        model=args.model,
        labeller_url=args.labeller_url,
        labeller_channel=args.channel,
        k=args.k,
        candidate_seed=args.candidate_seed,
        distractors=args.distractors,
        scripted_set=str(Path(args.scripted_set).resolve()) if args.scripted_set else None,
        **run_settings(args),
        **generation_settings(args),
    )


def report_lines(summary: Summary) -> str:
    """The pooled scores, the per-label table and the label provenance."""
    m = summary.metrics
    lines = []
    if isinstance(summary, BargainSummary):
        lines.append(f"track {summary.track} ({summary.provenance_note})")
        if summary.verifier_agreement:
            a = summary.verifier_agreement
            lines.append(
                f"blind verifier agreed on {a['agreed']:.0f} of {a['turns']:.0f} turns "
                f"(disagreement rate {a['disagreement_rate']:.3f}); scores on the agreed "
                "turns: bargain.agreed.*"
            )
    names = ["precision", "recall", "f1", "failure_rate"]
    names += [f"agreed.{n}" for n in ("precision", "recall", "f1")]
    for name in names:
        ms = m.get(f"bargain.{name}")
        if ms is None:
            continue
        macro = f"   macro {fmt_estimate(ms.macro)}" if ms.macro and name != "failure_rate" else ""
        lines.append(f"{name:>16}: micro {fmt_estimate(ms.micro)}{macro}")
        if name == "f1" and ms.by_group:
            depth = "  ".join(f"{g}: {fmt_estimate(e)}" for g, e in ms.by_group.items())
            lines.append(f"  f1 by depth: {depth}")
    for name, what in (("mean_f1", "mean F1"), ("joint_accuracy", "Joint-A")):
        ms = m.get(f"bargain.paper.{name}")
        if ms is not None:
            lines.append(
                f"{'paper ' + what:>16}: {fmt_estimate(ms.micro)}  (the paper's seven "
                "strategies; it used 5-fold CV over all 396 dialogues)"
            )
    if isinstance(summary, BargainSummary) and summary.scores is not None:
        lines.append(f"{'label':<22}{'support':>8}{'pred':>6}{'P':>7}{'R':>7}{'F1':>7}")
        for s in summary.scores.per_label:
            lines.append(
                f"{s.label:<22}{s.support:>8}{s.predicted:>6}"
                f"{s.precision:>7.3f}{s.recall:>7.3f}{s.f1:>7.3f}"
            )
        if summary.random_expectation:
            e = summary.random_expectation
            lines.append(
                f"random, analytic expectation: precision {e['precision']:.3f}, "
                f"recall {e['recall']:.3f}"
            )
    return "\n".join(lines)


COMMAND: RunCommand[BargainConfig] = RunCommand(
    profile=PROFILE,
    build=SPEC.plan,
    start_line=lambda config, plan: (
        f"bargain: {config.track} ({plan.n_tasks} dialogues), labeller {config.labeller}"
    ),
    closing=lambda result, out: report_lines(result.summary),
)


def run_command(args: argparse.Namespace) -> int:
    return drive(args, config_from_args(args), COMMAND)
