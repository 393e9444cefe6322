"""``todeval submit prepare RUN_DIR -o FILE`` and ``todeval submit verify FILE``
(:mod:`todeval.submission`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from todeval.errors import EXIT_OK, EXIT_REFUSED, UsageError
from todeval.registry import Registry

GROUP = "submit"


def register(registry: Registry) -> None:
    registry.group(GROUP, "publish a result: one archive of a run, and its check by replay")
    registry.lazy(
        GROUP,
        "prepare",
        "write a finished run as one submission archive (files, hashes, the system's description)",
        "todeval.commands.submit",
        add="add_prepare_arguments",
        run="run_prepare",
    )
    registry.lazy(
        GROUP,
        "verify",
        "check a submission archive: task set, trials, options, scorer, metrics, and every "
        "episode replayed (exit 4 when refused)",
        "todeval.commands.submit",
        add="add_verify_arguments",
        run="run_verify",
    )


def add_prepare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a finished run directory")
    parser.add_argument(
        "-o", "--output", required=True, metavar="FILE.tar.gz", help="the archive to write"
    )
    parser.add_argument(
        "--description", required=True, help="what the system under test is (one line)"
    )
    parser.add_argument(
        "--model-name",
        dest="runs_on",
        metavar="NAME",
        help="the model it runs on, by name (default: the role under test's model, if any)",
    )


def run_prepare(args: argparse.Namespace) -> int:
    from todeval.submission.verify import prepare

    out = Path(args.output)
    if args.runs_on is not None and "://" in args.runs_on:
        raise UsageError("--model-name: the model's name, not its endpoint")
    index = prepare(Path(args.run_dir), out, description=args.description, model=args.runs_on)
    print(
        f"wrote {out}: {index.benchmark}, {index.n_episodes} episodes, {len(index.files)} "
        f"files; check it with: todeval submit verify {out}"
    )
    return EXIT_OK


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive", metavar="FILE", help="a submission archive (.tar.gz)")
    parser.add_argument("-o", "--output", metavar="OUT.json", help="write the verdict as JSON")


def run_verify(args: argparse.Namespace) -> int:
    from todeval.core.files import write_output
    from todeval.submission.verify import verify

    verdict = verify(Path(args.archive))
    if args.output:
        write_output(Path(args.output), verdict.model_dump_json(indent=2) + "\n")
    print("\n".join(verdict.lines()))
    return EXIT_OK if verdict.status == "verified" else EXIT_REFUSED
