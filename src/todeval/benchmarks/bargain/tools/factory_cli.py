"""The Intent Factory's command line: ``add_factory_arguments`` and ``run_factory``.

Also runnable alone:
``python -m todeval.benchmarks.bargain.tools.factory_cli --model SPEC -o FILE``.
Expected errors print one line (``todeval: error: ...``) and exit 2 (usage) or 3 (bad input).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from todeval.backends.sampling import Sampling
from todeval.benchmarks.bargain.hierarchy import Hierarchy, default_hierarchy, load_hierarchy
from todeval.benchmarks.bargain.tools.factory import (
    SOURCES,
    FactoryConfig,
    FactoryModels,
    FactoryResult,
    IntentFactory,
    SourceMapping,
    default_mapping,
    load_prompts,
    parse_mapping,
)
from todeval.core.files import write_output
from todeval.dialogue.prompts import PromptSet, read_overrides
from todeval.errors import EXIT_USAGE, BadInputError, TodevalError, UsageError
from todeval.runner.options import (
    QUIET_HELP,
    RuntimeOptions,
    add_generation_arguments,
    model_pool,
    runtime_options,
)


def add_factory_arguments(parser: argparse.ArgumentParser) -> None:
    """The factory's options (a parser or an argument group)."""
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help="extractor, maintainer, matcher and resolver model (required)",
    )
    parser.add_argument(
        "--verifier-model", metavar="SPEC", default=None, help="verifier model (default --model)"
    )
    parser.add_argument(
        "--source",
        choices=list(SOURCES),
        default="craigslist",
        help="dialogues to extract from: craigslist (181, buyer turns; default) or casino "
        "(396 annotated, both campers)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="only the first N extraction dialogues of the seeded order",
    )
    parser.add_argument(
        "--heldout-limit",
        type=int,
        default=None,
        metavar="N",
        help="only the first N held-out dialogues of the seeded order",
    )
    parser.add_argument(
        "--heldout-fold",
        type=int,
        default=0,
        metavar="K",
        help="the held-out fold, 0-4 (default 0; folds by a hash of the dialogue id)",
    )
    parser.add_argument("--seed", type=int, default=0, help="order and model seed (default 0)")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="the hierarchy JSON to write (required)"
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        default=None,
        help="the report JSON (default: the output's name with .report.json)",
    )
    parser.add_argument(
        "--reference",
        metavar="FILE",
        default=None,
        help="reference hierarchy for coverage (default: the shipped hierarchy-v1.json)",
    )
    parser.add_argument(
        "--mapping",
        metavar="FILE",
        default=None,
        help="source label -> reference intent mapping (default: source-mapping-v1.json)",
    )
    parser.add_argument(
        "--prompts",
        metavar="DIR",
        default=None,
        help="directory of <template>.txt files overriding the factory-*.txt prompts",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=4,
        metavar="N",
        help="model calls in flight (default 4)",
    )
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    add_generation_arguments(
        parser, constrained_help="have the backend enforce the JSON replies", transcripts=False
    )


def report_path(output: Path, report: str | None) -> Path:
    if report is not None:
        return Path(report)
    name = output.name[: -len(".json")] if output.name.endswith(".json") else output.name
    return output.with_name(f"{name}.report.json")


def _check_writable(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise BadInputError(f"{path}: is a directory, not a file to write")
    if not parent.is_dir():
        raise BadInputError(f"{path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise BadInputError(f"{path}: not writable")


def _reference(path: str | None) -> Hierarchy:
    return default_hierarchy() if path is None else load_hierarchy(path)


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read {what} {path}: {exc}") from None


def _write(path: Path, data: Any) -> None:
    write_output(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def summary_lines(result: FactoryResult) -> list[str]:
    r = result.report
    c = r["counts"]
    lines = [
        f"factory: {r['source']}: {c['dialogues_extraction']} extraction / "
        f"{c['dialogues_heldout']} held-out dialogues",
        f"candidates {c['candidates']}, verified {c['verified']}, rejected {c['rejected']} "
        f"(+{c['verify_failures']} unreadable), merged {c['merged']}, "
        f"final intents {c['final_intents']}",
    ]
    for label, value in (
        ("turn coverage, resolved", r["coverage"]["turns_resolved"]),
        ("turn coverage, any alternative", r["coverage"]["turns"]),
        ("intent coverage", r["coverage"]["intents"]),
        ("duplicate ratio", r["duplicates"]["ratio"]),
    ):
        if value["value"] is None:
            lines.append(f"{label}: n/a (n = 0)")
        else:
            low, high = value["ci95"]
            lines.append(
                f"{label}: {value['value']:.3f} [{low:.3f}, {high:.3f}] "
                f"({value['successes']}/{value['n']})"
            )
    return lines


def run_factory(args: argparse.Namespace) -> int:
    """Run the factory from parsed :func:`add_factory_arguments` options; 0 on success."""
    if not args.model:
        raise UsageError("the intent factory needs --model SPEC")
    if not args.output:
        raise UsageError("the intent factory needs -o/--output FILE")
    for flag, value in (("--limit", args.limit), ("--heldout-limit", args.heldout_limit)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be at least 1")
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    if args.source not in SOURCES:
        raise UsageError(f"unknown source {args.source!r}; valid choices: {', '.join(SOURCES)}")
    output = Path(args.output)
    report = report_path(output, args.report)
    _check_writable(output)
    _check_writable(report)
    reference = _reference(args.reference)
    mapping = (
        default_mapping(reference)
        if args.mapping is None
        else parse_mapping(_read(args.mapping, "mapping"), args.mapping, reference)
    )
    prompts = load_prompts(read_overrides(args.prompts) if args.prompts else None)
    config = FactoryConfig(
        source=args.source,
        seed=args.seed,
        limit=args.limit,
        heldout_limit=args.heldout_limit,
        heldout_fold=args.heldout_fold,
        max_concurrency=args.max_concurrency,
        sampling=Sampling(args.constrained, args.temperature, args.max_tokens),
        quiet=args.quiet,
    )
    runtime = replace(runtime_options(args), script=getattr(args, "script", None))
    result = asyncio.run(_run(config, args, runtime, prompts, reference, mapping))
    _write(output, result.hierarchy.model_dump(mode="json"))
    result.report["output"] = str(output)
    _write(report, result.report)
    if not args.quiet:
        for line in summary_lines(result):
            print(line)
        print(f"wrote {output} and {report}")
    return 0


async def _run(
    config: FactoryConfig,
    args: argparse.Namespace,
    runtime: RuntimeOptions,
    prompts: PromptSet,
    reference: Hierarchy,
    mapping: SourceMapping,
) -> FactoryResult:
    pool = model_pool(None, runtime, seed=config.seed)
    try:
        main = pool.get(args.model)
        verifier_spec = args.verifier_model or args.model
        models = FactoryModels(
            extractor=main,
            verifier=pool.get(verifier_spec),
            maintainer=main,
            matcher=main,
            specs={
                "extractor": args.model,
                "verifier": verifier_spec,
                "maintainer": args.model,
                "matcher": args.model,
            },
        )
        return await IntentFactory(config, models, prompts, reference, mapping).run()
    finally:
        await pool.aclose()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(
        prog="python -m todeval.benchmarks.bargain.tools.factory_cli",
        description="Intent Factory: an intent hierarchy extracted from bargaining dialogues",
    )
    add_factory_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_factory(args)
    except TodevalError as exc:
        print(f"todeval: error: {exc.message}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
