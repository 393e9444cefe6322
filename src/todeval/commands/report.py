"""``todeval report RUN_DIR... [-o report.html] [--table csv|md|latex]``.

Writes one self-contained HTML report (leaderboard with CIs, figures, failure taxonomy,
simulator panels, transcript browser, manifests) or, with ``--table``, only the leaderboard
table. The report embeds a bounded set of transcripts per run, failures first
(``--transcripts N|all``, default 50), and says what it left out. Inputs: run directories,
panel directories (``panel.json``) and corpus-scoring summaries (``todeval score ... -o X.json``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from todeval.registry import Command, Registry

if TYPE_CHECKING:  # the report modules are imported when the command runs
    from todeval.report import TranscriptCap

DEFAULT_OUTPUT = "report.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from todeval.report import DEFAULT_TITLE, DEFAULT_TRANSCRIPTS, TABLE_FORMATS

    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="RUN_DIR",
        help="run directories, panel directories (panel.json) or corpus-score summaries (.json)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"output file (default {DEFAULT_OUTPUT}; with --table: standard output)",
    )
    parser.add_argument(
        "--table",
        choices=TABLE_FORMATS,
        help="write only the leaderboard table (with CIs) in this format",
    )
    parser.add_argument("--title", default=DEFAULT_TITLE, help="page title")
    parser.add_argument(
        "--transcripts",
        type=_cap,
        default=DEFAULT_TRANSCRIPTS,
        metavar="N|all",
        help=f"transcripts embedded per run, failures first (default {DEFAULT_TRANSCRIPTS}; "
        "all: every episode)",
    )


def _cap(text: str) -> TranscriptCap:
    from todeval.report import parse_cap

    try:
        return parse_cap(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (a number >= 0 or 'all')") from None


def _write(path: Path, text: str) -> None:
    """Written whole or not at all: a failure leaves the previous report as it was (exit 3)."""
    from todeval.core.files import write_output

    write_output(path, text)


def run(args: argparse.Namespace) -> int:
    from todeval.report import boards, build_html, export_table, load_inputs
    from todeval.results.rescore import refuse_mixed_versions, run_scorer_version

    cap: TranscriptCap = 0 if args.table else args.transcripts
    inputs = load_inputs([Path(p) for p in args.inputs], transcripts=cap, reviews=not args.table)
    refuse_mixed_versions(  # runs graded by different scorer versions are not shown together
        [(str(r.path), r.manifest.benchmark, run_scorer_version(r.path)) for r in inputs.runs]
    )
    if args.table:
        text = export_table(boards(inputs), args.table)
        if args.output in (None, "-"):
            sys.stdout.write(text)
        else:
            _write(Path(args.output), text)
            print(
                f"wrote {args.output} ({args.table}, {len(inputs.runs) + len(inputs.scores)} rows)"
            )
        return 0
    out = Path(args.output or DEFAULT_OUTPUT)
    html = build_html(inputs, title=args.title)
    _write(out, html)
    episodes = sum(r.n_episodes for r in inputs.runs)
    shown = sum(len(r.transcripts) for r in inputs.runs)
    size = out.stat().st_size
    print(
        f"wrote {out} ({len(inputs.runs)} run(s), {episodes:,} episodes, {shown:,} "
        f"transcripts, {len(inputs.scores)} corpus summary file(s), {size / 1e6:.2f} MB)"
    )
    return 0


def register(registry: Registry) -> None:
    registry.add(
        "top",
        Command(
            "report",
            "write a self-contained HTML report (or a leaderboard table) of runs",
            add_arguments,
            run,
        ),
    )
