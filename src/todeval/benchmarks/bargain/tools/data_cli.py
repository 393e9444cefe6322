"""``todeval data bargain``: the scripted set (generate, check) and Intent Factory.

* ``--generate`` (template mode, the default): rebuild a set from a seed, offline; with the
  default arguments the output equals the shipped set byte for byte (the command says so).
* ``--generate --mode llm --generator SPEC --verifier SPEC``: a generator model writes the
  buyer turns, a blind verifier labels them (see :mod:`.weaver_llm`).
* ``--check [FILE]``: the set's figures (:mod:`.weaver_check`); the shipped set by default.

Intent Factory is its own command, ``todeval data bargain-factory`` (:mod:`.factory_cli`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from todeval.benchmarks.bargain.data import DEFAULT_K, DISTRACTORS
from todeval.errors import BadInputError, UsageError


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--generate", action="store_true", help="build a scripted set (Problem Weaver)"
    )
    action.add_argument(
        "--check",
        nargs="?",
        const="",
        metavar="FILE",
        help="figures of a scripted set: multi-intent share, per-intent counts and diversity, "
        "the keyword baseline's F1 (default: the shipped set)",
    )
    gen = parser.add_argument_group("--generate")
    gen.add_argument("--mode", choices=("template", "llm"), default="template")
    gen.add_argument("-n", "--tasks", type=int, default=None, help="tasks (default 1000)")
    gen.add_argument("--seed", type=int, default=None, help="generation seed (default 0)")
    gen.add_argument("--name", help="the set's name (default v1, or llm-n<N>-s<seed>)")
    gen.add_argument("--generator", metavar="SPEC", help="llm mode: the model writing turns")
    gen.add_argument("--verifier", metavar="SPEC", help="llm mode: the blind labelling model")
    gen.add_argument("--distractors", choices=list(DISTRACTORS), default="uniform")
    gen.add_argument("--k", type=int, default=DEFAULT_K, help="llm mode: verifier's list size")
    gen.add_argument("--max-concurrency", type=int, default=4, help="llm mode: calls at once")
    gen.add_argument("--max-tokens", type=int, default=None, help="llm mode: cap per call")
    gen.add_argument("--constrained", action="store_true", help="llm mode: enforce JSON replies")
    gen.add_argument("--no-cache", action="store_true", help="llm mode: bypass the cache")
    gen.add_argument("-o", "--output", metavar="FILE", help="the set file to write")
    parser.add_argument("--json", action="store_true", help="--check: print the report as JSON")


def _generate(args: argparse.Namespace) -> int:
    from todeval.benchmarks.bargain import weaver
    from todeval.benchmarks.bargain.hierarchy import default_hierarchy

    n = weaver.DEFAULT_TASKS if args.tasks is None else args.tasks
    seed = weaver.DEFAULT_SEED if args.seed is None else args.seed
    if n < 1:
        raise UsageError("-n/--tasks must be at least 1")
    if args.mode == "llm":
        return _generate_llm(args, n, seed)
    if args.generator or args.verifier:
        raise UsageError("--generator and --verifier are for --mode llm")
    name = args.name or (
        "v1"
        if (n, seed) == (weaver.DEFAULT_TASKS, weaver.DEFAULT_SEED)
        else f"template-n{n}-s{seed}"
    )
    out = Path(args.output or f"bargain-scripted-{name}.jsonl.gz")
    h, t = default_hierarchy(), weaver.default_templates()
    tasks = weaver.weave_templates(n, seed, h, t)
    header = weaver.template_header(tasks, seed, h, t, name)
    weaver.write_set(out, header, tasks)
    shipped, _ = weaver.default_set()
    same = header.content_sha256 == shipped.content_sha256
    print(f"wrote {out}: {n} tasks, seed {seed}, content sha256 {header.content_sha256}")
    print(
        "identical to the shipped set"
        if same
        else f"differs from the shipped set (sha256 {shipped.content_sha256[:16]}, "
        f"{shipped.n_tasks} tasks, seed {shipped.seed})"
    )
    return 0


def _generate_llm(args: argparse.Namespace, n: int, seed: int) -> int:
    from todeval.benchmarks.bargain.tools.weaver_llm import (
        LlmWeaveSettings,
        llm_header,
        weave_llm_async,
    )
    from todeval.benchmarks.bargain.weaver import write_set
    from todeval.runner.options import RuntimeOptions

    if not args.generator or not args.verifier:
        raise UsageError("--mode llm needs --generator SPEC and --verifier SPEC")
    if args.k < 1 or args.max_concurrency < 1:
        raise UsageError("--k and --max-concurrency must be at least 1")
    settings = LlmWeaveSettings(
        n=n,
        seed=seed,
        generator=args.generator,
        verifier=args.verifier,
        k=args.k,
        distractors=args.distractors,
        max_concurrency=args.max_concurrency,
        max_tokens=args.max_tokens,
        constrained=args.constrained,
    )
    name = args.name or f"llm-n{n}-s{seed}"
    out = Path(args.output or f"bargain-scripted-{name}.jsonl.gz")
    result = asyncio.run(weave_llm_async(settings, RuntimeOptions(cache=not args.no_cache)))
    if not result.tasks:
        raise BadInputError(
            f"no task could be generated: {result.dropped[0][1] if result.dropped else 'none'}"
        )
    header = llm_header(result, settings, name)
    write_set(out, header, result.tasks)
    print(
        f"wrote {out}: {len(result.tasks)} tasks ({len(result.dropped)} dropped: unreadable "
        f"generator replies), {result.turns} turns; the blind verifier agreed on "
        f"{result.agreed} (disagreement rate {result.disagreement_rate:.3f})"
    )
    for task, why in result.dropped[:5]:
        print(f"  dropped {task}: {why}", file=sys.stderr)
    return 0


def _check(args: argparse.Namespace) -> int:
    from todeval.benchmarks.bargain.tools.weaver_check import check_set, report_text
    from todeval.benchmarks.bargain.weaver import default_set, read_set

    if args.check:
        header, tasks = read_set(args.check)
    else:
        header, shipped = default_set()
        tasks = list(shipped)
    report = check_set(header, tasks)
    print(
        json.dumps(report.model_dump(mode="json"), indent=2) if args.json else report_text(report)
    )
    return 0


def run_data(args: argparse.Namespace) -> int:
    if args.generate:
        return _generate(args)
    return _check(args)


__all__ = ["add_data_arguments", "run_data"]
