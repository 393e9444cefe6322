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
from typing import TYPE_CHECKING, Any

from todeval.core.files import write_output
from todeval.core.records import EpisodeRecord, Manifest
from todeval.errors import BadInputError
from todeval.registry import Registry, discover

if TYPE_CHECKING:
    from todeval.backends.types import Backend
from todeval.review import (
    LLMReviewSummary,
    Review,
    Reviewer,
    ReviewSummary,
    Share,
    llm_summary,
    summarise,
)
from todeval.review.reading import load_reviewer, read_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="finished run directories")
    parser.add_argument("-o", "--output", metavar="FILE", help="write every review here (JSONL)")
    parser.add_argument("--json", action="store_true", help="print the run summaries as JSON")
    parser.add_argument(
        "--csv", metavar="FILE", help="write one row per run and side/fault kind here (CSV)"
    )
    llm = parser.add_argument_group("LLM reviewer (failed episodes only)")
    llm.add_argument("--review-model", metavar="SPEC", help="also ask this model who failed")
    llm.add_argument("--models-file", metavar="FILE", help="named models for --review-model")
    llm.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    llm.add_argument("--cache-path", metavar="FILE", help="response cache file")
    llm.add_argument("--seed", type=int, default=0, help="the reviewer's seed (default 0)")
    llm.add_argument(
        "--concurrency", type=int, default=8, metavar="N", help="reviewer calls in flight"
    )


def reviewer_for(benchmark: str, registry: Registry | None = None) -> Reviewer:
    """The reviewer the benchmark's profile names (one-line error when it names none)."""
    profiles = (registry or discover()).profiles
    profile = profiles.get(benchmark)
    if profile is None or profile.reviewer is None:
        known = ", ".join(sorted(n for n, p in profiles.items() if p.reviewer)) or "none"
        raise BadInputError(f"no reviewer for {benchmark} runs (benchmarks with one: {known})")
    return load_reviewer(profile.reviewer)


def review_run(path: Path, registry: Registry | None = None) -> tuple[Reviewer, list[Review]]:
    """Every reviewable episode of the run directory ``path``, reviewed by the rules."""
    manifest, records = read_run(path)
    reviewer = reviewer_for(manifest.benchmark, registry)
    return reviewer, list(reviewer.review(manifest, records))


def format_summary(path: Path, reviewer: Reviewer, summary: ReviewSummary) -> str:
    from todeval.console.tables import render_rows

    names = {
        "agent": reviewer.agent,
        "simulator": reviewer.simulator,
        "both": "both",
        "unclear": "unclear (no verified fault)",
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
    if summary.llm is not None:
        llm = summary.llm
        rows = [[names[v], share.text()] for v, share in llm.verdicts.items()]
        kappa = "-" if llm.kappa is None else f"{llm.kappa:.3f}"
        lines += [
            "",
            f"LLM reviewer {llm.model}: {llm.reviewed} failed episodes judged, "
            f"{llm.failures} unreadable answers",
            render_rows(["who failed (LLM)", "failed episodes [95% Wilson]"], rows),
            f"agreement with the rules: {llm.agreement.text()}; Cohen's kappa {kappa}",
            f"reviewer calls {llm.calls}, tokens {llm.prompt_tokens} + {llm.completion_tokens}, "
            f"cost ${llm.cost_usd:.4f}",
        ]
    lines += [f"note: {note}" for note in reviewer.notes]
    return "\n".join(lines)


def run_command(args: argparse.Namespace) -> int:
    import asyncio

    runs = []
    for path in map(Path, args.runs):
        manifest, records = read_run(path)
        reviewer = reviewer_for(manifest.benchmark)
        found = list(reviewer.review(manifest, records))
        runs.append((path, manifest, records, reviewer, found, summarise(reviewer, found)))
    if args.review_model:
        backend = _reviewer_backend(args)

        async def ask_all() -> None:
            try:
                for _, manifest, records, reviewer, found, summary in runs:
                    summary.llm = await _ask_model(
                        args, backend, reviewer, manifest, records, found
                    )
            finally:
                await backend.aclose()

        asyncio.run(ask_all())
    reviews = [review for *_, found, _ in runs for review in found]
    if args.output:
        write_output(Path(args.output), "".join(r.model_dump_json() + "\n" for r in reviews))
    if args.csv:
        write_output(Path(args.csv), summary_csv([(run[0], run[5]) for run in runs]))
    if args.json:
        out = [{"run": str(run[0]), **run[5].model_dump(mode="json")} for run in runs]
        print(json.dumps(out, indent=1))
    else:
        print("\n\n".join(format_summary(run[0], run[3], run[5]) for run in runs))
    return 0


def summary_csv(runs: list[tuple[Path, ReviewSummary]]) -> str:
    """One row per run and line of the split: ``who failed`` rows (verdicts of the failed
    episodes), ``fault`` rows (episodes with each side's fault kind) and ``rate`` rows
    (success, simulator fault rate, conditional success), each with k, n and a Wilson CI."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "benchmark", "row", "side", "name", "k", "n", "value", "low", "high"])

    def row(path: Path, s: ReviewSummary, kind: str, side: str, name: str, share: Any) -> None:
        cells = [share.value, share.low, share.high]
        fmt = ["" if c is None else f"{c:.4f}" for c in cells]
        writer.writerow([str(path), s.benchmark, kind, side, name, share.k, share.n, *fmt])

    for path, s in runs:
        for verdict, share in s.verdicts.items():
            row(
                path,
                s,
                "who failed",
                verdict if verdict in ("agent", "simulator") else "",
                verdict,
                share,
            )
        for fault in s.faults:
            share = Share.of(fault.episodes, s.episodes)
            row(path, s, "fault", fault.side, fault.kind, share)
        row(path, s, "rate", "", "success", s.success)
        row(path, s, "rate", "simulator", "episodes with a simulator fault", s.simulator_fault_rate)
        row(
            path,
            s,
            "rate",
            "",
            "success where the simulator spoiled nothing (conditional)",
            s.success_unspoiled,
        )
    return buffer.getvalue()


def _reviewer_backend(args: argparse.Namespace) -> Backend:
    from todeval.backends.cache import ResponseCache, default_cache_path
    from todeval.backends.factory import make_backend

    cache = None
    if not args.no_cache:
        cache = ResponseCache(Path(args.cache_path) if args.cache_path else default_cache_path())
    return make_backend(args.review_model, args.models_file, cache=cache, seed=args.seed)


async def _ask_model(
    args: argparse.Namespace,
    backend: Backend,
    reviewer: Reviewer,
    manifest: Manifest,
    records: list[EpisodeRecord],
    reviews: list[Review],
) -> LLMReviewSummary:
    from todeval.core.records import CallUsage
    from todeval.review.llm import review_failed

    failed_ids = {r.episode_id for r in reviews if r.verdict != "none"}
    failed = [r for r in records if r.episode_id in failed_ids]
    briefs = reviewer.briefs(manifest, failed) if reviewer.briefs and failed else {}
    usage: list[CallUsage] = []
    failures = await review_failed(
        reviews,
        {r.episode_id: r for r in failed},
        briefs,
        reviewer,
        backend,
        seed=args.seed,
        concurrency=args.concurrency,
        usage=usage,
    )
    return llm_summary(reviews, backend.info.model, failures, usage)
