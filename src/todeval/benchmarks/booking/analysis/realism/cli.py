"""``todeval booking realism judge|score`` (see docs/user-simulators.md, "Realism")."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from todeval.errors import BadInputError, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="realism_command", metavar="COMMAND", required=True)
    judge = sub.add_parser(
        "judge", help="LLM-judge naturalness and coherence of the user turns of booking runs"
    )
    judge.add_argument("runs", nargs="+", metavar="RUN_DIR", help="booking run directories")
    judge.add_argument(
        "--judge-model", required=True, metavar="SPEC", help="the judge: a spec or models-file name"
    )
    judge.add_argument("--models-file", default=None, metavar="FILE", help="named models")
    judge.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    judge.add_argument("--cache-path", default=None, metavar="FILE", help="response cache file")
    judge.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    judge.add_argument("--seed", type=int, default=0, help="judge and bootstrap seed")
    judge.add_argument("--concurrency", type=int, default=8, help="judge calls in flight")
    judge.add_argument("-o", "--output", default=None, metavar="FILE", help="write JSON here")
    judge.add_argument("--json", action="store_true", help="print the report as JSON")
    score = sub.add_parser(
        "score", help="accuracy of identifying the person in blind-test answers (Wilson CI)"
    )
    score.add_argument("files", nargs="+", metavar="ANSWERS", help="answer files (JSONL/CSV)")
    score.add_argument("--key", default=None, metavar="KEY", help="key file (default: found)")
    score.add_argument("--resamples", type=int, default=1000, help="agreement resamples")
    score.add_argument("--seed", type=int, default=0, help="agreement bootstrap seed")
    score.add_argument("--json", action="store_true", help="print the report as JSON")


def run_command(args: argparse.Namespace) -> int:
    if args.realism_command == "judge":
        return _judge(args)
    return _score(args)


def _judge(args: argparse.Namespace) -> int:
    from todeval.backends.cache import ResponseCache, default_cache_path
    from todeval.backends.factory import make_backend
    from todeval.benchmarks.booking.analysis.realism.judge import (
        format_report,
        judge_simulators,
        read_runs,
    )
    from todeval.core.files import write_output

    if args.resamples < 1:
        raise UsageError(f"--resamples {args.resamples}: must be at least 1")
    simulators = read_runs([Path(p) for p in args.runs])
    if not any(s.dialogues for s in simulators):
        raise BadInputError("no user turns to judge in " + ", ".join(args.runs))
    cache = None
    if not args.no_cache:
        cache = ResponseCache(Path(args.cache_path) if args.cache_path else default_cache_path())
    backend = make_backend(args.judge_model, args.models_file, cache=cache, seed=args.seed)

    async def run() -> str:
        try:
            report = await judge_simulators(
                simulators,
                backend,
                seed=args.seed,
                resamples=args.resamples,
                concurrency=args.concurrency,
            )
        finally:
            await backend.aclose()
        if args.output:
            write_output(Path(args.output), report.model_dump_json(indent=2) + "\n")
        return report.model_dump_json(indent=2) + "\n" if args.json else format_report(report)

    sys.stdout.write(asyncio.run(run()))
    return 0


def _score(args: argparse.Namespace) -> int:
    from todeval.annotation.items import gold_for, merge_answers, read_key
    from todeval.benchmarks.booking.analysis.realism.blind import blind_score, format_blind

    paths = [Path(f) for f in args.files]
    for p in paths:
        if not p.is_file():
            raise BadInputError(f"{p}: no such file")
    ratings = merge_answers(paths)
    if not ratings:
        raise BadInputError("no answers in " + ", ".join(map(str, paths)))
    key_file = Path(args.key) if args.key else gold_for(paths)
    if key_file is None:
        raise UsageError("no key file found next to the answers; name it with --key")
    report = blind_score(ratings, read_key(key_file), seed=args.seed, resamples=args.resamples)
    sys.stdout.write(report.model_dump_json(indent=2) + "\n" if args.json else format_blind(report))
    return 0


__all__ = ["add_arguments", "run_command"]
