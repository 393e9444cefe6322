"""``todeval review RUN_DIR... [-o FILE] [--json]``: the registered reviewer of each run's
benchmark reads every episode (no re-run) and prints, per run, the failed episodes by verdict
(agent, simulator, both, unclear) with Wilson intervals, the faults by side and kind, the
simulator fault rate and the conditional success where the simulator spoiled nothing.
``-o FILE`` writes one review per line (JSONL); ``--json`` prints the summaries as JSON.
Infrastructure-error episodes are not reviewed (they are re-run, not scored)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from todeval.core.files import write_output
from todeval.core.imports import load_reference
from todeval.core.outcome import Outcome
from todeval.errors import BadInputError
from todeval.registry import Registry, discover
from todeval.review import Review, Reviewer, ReviewSummary, summarise


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="finished run directories")
    parser.add_argument("-o", "--output", metavar="FILE", help="write every review here (JSONL)")
    parser.add_argument("--json", action="store_true", help="print the run summaries as JSON")


def reviewer_for(benchmark: str, registry: Registry | None = None) -> Reviewer:
    refs = (registry or discover()).reviewers
    ref = refs.get(benchmark)
    if ref is None:
        known = ", ".join(sorted(refs)) or "none"
        raise BadInputError(f"no reviewer for {benchmark} runs (benchmarks with one: {known})")
    found = load_reference(ref, what="reviewer")
    if not isinstance(found, Reviewer):
        raise TypeError(f"{ref} is not a todeval.review.Reviewer")
    return found


def review_run(path: Path, registry: Registry | None = None) -> tuple[Reviewer, list[Review]]:
    """Every reviewable episode of the run directory ``path``, reviewed."""
    from todeval.runner.store import RunDirectory

    store = RunDirectory(path)
    if not store.exists():
        raise BadInputError(f"{path}: not a run directory (no manifest.json)")
    manifest = store.read_manifest()
    reviewer = reviewer_for(manifest.benchmark, registry)
    records = (r for r in store.iter_episodes() if r.outcome is not Outcome.INFRASTRUCTURE_ERROR)
    return reviewer, list(reviewer.review(manifest, records))


def format_summary(path: Path, reviewer: Reviewer, summary: ReviewSummary) -> str:
    from todeval.console.tables import render_rows

    names = {
        "agent": reviewer.agent,
        "simulator": reviewer.simulator,
        "both": "both",
        "unclear": "unclear (no fault found)",
    }
    lines = [f"{path}: {summary.episodes} episodes, {summary.failed} failed", ""]
    rows = [[names[v], share.text()] for v, share in summary.verdicts.items()]
    lines.append(render_rows(["who failed", "failed episodes [95% Wilson]"], rows))
    if summary.faults:
        fault_rows = [
            [reviewer.side_name(f.side), f.kind, str(f.episodes), str(f.failed)]
            for f in summary.faults
        ]
        lines += ["", render_rows(["side", "fault", "episodes", "of them failed"], fault_rows)]
    sim = reviewer.simulator
    rates = [
        ["success", summary.success.text()],
        [f"episodes with a {sim} fault", summary.simulator_fault_rate.text()],
        [
            f"success where the {sim} spoiled nothing (conditional)",
            summary.success_unspoiled.text(),
        ],
    ]
    lines += ["", render_rows(["", "k/n  rate [95% Wilson]"], rates)]
    lines += [f"note: {note}" for note in reviewer.notes]
    return "\n".join(lines)


def run_command(args: argparse.Namespace) -> int:
    reviews: list[Review] = []
    blocks: list[str] = []
    summaries = []
    for path in map(Path, args.runs):
        reviewer, found = review_run(path)
        reviews += found
        summary = summarise(reviewer, found)
        summaries.append({"run": str(path), **summary.model_dump(mode="json")})
        blocks.append(format_summary(path, reviewer, summary))
    if args.output:
        write_output(Path(args.output), "".join(r.model_dump_json() + "\n" for r in reviews))
    if args.json:
        print(json.dumps(summaries, indent=1))
    else:
        print("\n\n".join(blocks))
    return 0
