"""``todeval score multiwoz PRED.json``: options, the stdout table and the JSON output.

Heavy modules (rapidfuzz, numpy; sacremoses only for non-ASCII text) are imported only when
the command runs, so registering the command costs nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from todeval.core.files import write_output
from todeval.core.gcpause import collector_paused
from todeval.errors import UsageError
from todeval.scoring.multiwoz._domains import ACTIVE_DOMAIN_MODES
from todeval.scoring.multiwoz._names import METRICS

if TYPE_CHECKING:
    from todeval.scoring.multiwoz._models import MultiwozResult
    from todeval.scoring.multiwoz._summary import MultiwozSummary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "predictions",
        metavar="PRED.json",
        help="predictions in the community format (.json or .json.gz)",
    )
    parser.add_argument(
        "--metrics",
        default=",".join(METRICS),
        help=f"comma-separated subset of {','.join(METRICS)} (default: all; dst needs states)",
    )
    parser.add_argument(
        "--active-domains",
        choices=ACTIVE_DOMAIN_MODES,
        default="given",
        help="where a turn's active domains come from: the file's own, estimated where absent "
        "(given, default); always estimated from state changes (state); slot-prefixed "
        "placeholders such as [restaurant_name] (placeholders)",
    )
    parser.add_argument("-o", "--output", metavar="OUT.json", help="write the summary JSON here")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--serial",
        action="store_true",
        help="compute the text metrics (Moses, BLEU, richness) in this process, not in a forked "
        "child (same results, slower)",
    )
    parser.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)"
    )


def _import_summary_modules() -> None:
    """Import what the summary needs (its pydantic models, numpy) while the child process
    computes the text metrics, instead of before or after."""
    import numpy  # noqa: F401

    import todeval.scoring.multiwoz._summary  # noqa: F401


def run(args: argparse.Namespace) -> int:
    with collector_paused():  # one bounded batch: its objects live until the output is written
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from todeval.scoring.multiwoz._evaluate import evaluate

    metrics = [m.strip() for m in str(args.metrics).split(",") if m.strip()]
    if args.resamples < 1:
        raise UsageError("--resamples must be at least 1")
    result = evaluate(
        args.predictions,
        metrics=metrics,
        active_domains=args.active_domains,
        parallel=not args.serial and (os.cpu_count() or 1) > 1,
        while_waiting=_import_summary_modules,
    )
    from todeval.scoring.multiwoz._summary import to_summary

    summary = to_summary(result, seed=args.seed, resamples=args.resamples)
    for warning in result.warnings:
        print(f"todeval: warning: {warning}", file=sys.stderr)
    print(format_table(result, summary))
    if args.output:
        write_output(Path(args.output), summary.model_dump_json(indent=2) + "\n")
    return 0


def _ci(summary: MultiwozSummary, name: str) -> str:
    metric = summary.metrics.get(name)
    if metric is None or metric.micro.ci_low is None or metric.micro.ci_high is None:
        return ""
    return f"[{metric.micro.ci_low:.2f}, {metric.micro.ci_high:.2f}]"


def _missing(count: int) -> str:
    if not count:
        return ""
    return f" ({count} test dialogue{'s' if count > 1 else ''} missing, not scored)"


def domains_used(result: MultiwozResult) -> str:
    """Where the active domains scored with came from, as used (not only as asked for)."""
    opts = result.options
    if "inform" not in opts.metrics and "success" not in opts.metrics:
        return "not used by the chosen metrics"
    if opts.active_domains == "placeholders":
        return "placeholders (from each response's slot placeholders)"
    estimated, turns = opts.estimated_active_domain_turns, result.n_turns
    if opts.active_domains == "state":
        return "state (estimated from state changes for every turn)"
    if estimated == 0:
        return "given"
    if estimated >= turns:
        return "estimated from state changes for every turn (the file gives none)"
    return f"given for {turns - estimated} turns, estimated from state changes for {estimated}"


def format_table(result: MultiwozResult, summary: MultiwozSummary) -> str:
    """A readable plain-text report of the scores."""
    opts = result.options
    lines = [
        f"MultiWOZ test set, scored with the {result.scheme}",
        f"file: {result.source}",
        f"dialogues: {result.n_dialogues}{_missing(result.missing_dialogues)}  "
        f"turns: {result.n_turns}  "
        f"states: {'gold (MultiWOZ 2.2)' if opts.gold_states else 'predicted'}  "
        f"active domains: {domains_used(result)}",
        "",
        f"{'metric':<10} {'value':>8}  95% CI ({summary.ci.resamples} resamples)",
    ]
    for label, key, value in (
        ("Inform", "inform", result.inform),
        ("Success", "success", result.success),
        ("BLEU", "bleu", result.bleu),
        ("Combined", "combined", result.combined),
    ):
        if value is not None:
            lines.append(f"{label:<10} {value:>8.2f}  {_ci(summary, 'multiwoz.' + key)}")
    if result.by_domain:
        lines += ["", f"{'domain':<12} {'dialogues':>9} {'Inform':>8} {'Success':>8}"]
        for domain, rates in result.by_domain.items():
            inform = f"{rates.inform:.1f}" if rates.inform is not None else "-"
            success = f"{rates.success:.1f}" if rates.success is not None else "-"
            lines.append(f"{domain:<12} {rates.dialogues:>9} {inform:>8} {success:>8}")
    if result.richness is not None:
        r = result.richness
        lines += [
            "",
            f"richness: avg length {r.avg_length:.2f}, cond. bigram entropy "
            f"{r.cond_entropy:.2f}, unique words {r.unique_words}, unique trigrams "
            f"{r.unique_trigrams}, entropy {r.entropy:.2f}, MSTTR-50 {r.msttr:.3f}",
        ]
    if result.dst is not None:
        d = result.dst
        lines += [
            "",
            f"dst ({d.turns} turns): joint accuracy {d.joint_accuracy:.2f}, slot precision "
            f"{d.slot_precision:.2f}, recall {d.slot_recall:.2f}, F1 {d.slot_f1:.2f}",
        ]
    return "\n".join(lines)
