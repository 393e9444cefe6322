"""Executing a run from the command line: the start line, the run, the notes it printed.

Every result is also noted on ``args`` (:func:`retry_exit` reads them back), so the CLI ends a
run -- or a panel of runs -- that finished with infrastructure errors with exit 5 and one line
saying how many episodes to retry and the first cause, whatever the benchmark.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from todeval.core.redact import redact
from todeval.runner.execute import RunResult, execute_plan
from todeval.runner.plan import RunPlan


def execute_from_args(
    plan: RunPlan, out: Path, args: argparse.Namespace, *, start_line: str
) -> RunResult:
    """Run ``plan`` into ``out`` with the options of ``add_run_arguments``.

    ``start_line`` (what runs, and where) is printed first unless ``--quiet``; the runner's
    notes (a run directory of another version, ...) after the run.
    """
    if not args.quiet:
        in_flight = concurrency_line(plan, args.max_concurrency)
        # the start line names the models as given: a URL's ?api_key= is not printed
        print(redact(f"{start_line} -> {out}; {in_flight}"), file=sys.stderr)
    result = execute_plan(
        plan,
        out,
        max_concurrency=args.max_concurrency,
        quiet=args.quiet,
        command=getattr(args, "_argv", None),
        executor=args.executor,
        ray_address=args.ray_address,
        review=not getattr(args, "no_review", False),
    )
    for note in result.notes if not args.quiet else ():
        print(redact(note), file=sys.stderr)
    results: list[RunResult] | None = getattr(args, "_results", None)
    if results is not None:
        results.append(result)
    return result


def concurrency_line(plan: RunPlan, max_concurrency: int) -> str:
    """What the run keeps in flight: ``max_concurrency`` episodes and, per model endpoint, as
    many calls, unless the endpoint allows fewer -- then the figure and why (the models file's
    ``connection_limit``, or a backend that runs one call at a time)."""
    from todeval.backends.factory import ONE_CALL_AT_A_TIME

    if plan.interactive:
        return "one episode at a time (a person plays)"
    noun = "episode" if max_concurrency == 1 else "episodes"
    parts = [f"up to {max_concurrency} {noun} in flight"]
    limits: dict[str, tuple[int, str]] = {}
    models = plan.players.get("models")
    for info in models.values() if isinstance(models, dict) else ():
        if not isinstance(info, dict) or not isinstance(info.get("connection_limit"), int):
            continue
        endpoint = str(info.get("base_url") or f"{info.get('backend')}:{info.get('model')}")
        limits.setdefault(endpoint, (info["connection_limit"], str(info.get("backend"))))
    for endpoint, (limit, backend) in sorted(limits.items()):
        if limit >= max_concurrency:
            continue
        if backend in ONE_CALL_AT_A_TIME:
            why = f"the {backend} backend runs one call at a time"
        else:
            why = "the models file's connection_limit"
        parts.append(f"calls to {endpoint}: at most {limit} in flight ({why})")
    return "; ".join(parts)


def retry_exit(args: argparse.Namespace) -> str | None:
    """The closing line of a command whose runs left episodes to retry, else ``None``."""
    results: list[RunResult] = getattr(args, "_results", None) or []
    to_retry = sum(r.to_retry for r in results)
    if not to_retry:
        return None
    cause = next((r.first_cause for r in results if r.first_cause), None)
    why = f"infrastructure errors, the first: {cause}" if cause else "infrastructure errors"
    noun = "episode" if to_retry == 1 else "episodes"
    return f"finished; {to_retry} {noun} to retry ({why}): run the same command"
