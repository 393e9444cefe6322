"""The ``todeval annotate`` commands (see ``docs/annotation.md``)."""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from pathlib import Path
from typing import Any

from todeval.annotation.agreement import AgreementReport, Figure, agreement_report
from todeval.annotation.items import (
    KINDS,
    GoldItem,
    gold_for,
    merge_answers,
    read_key,
    stratified_sample,
    write_export,
)
from todeval.errors import BadInputError, UsageError, choice_error
from todeval.registry import AnnotationSource, discover

# -- export ----------------------------------------------------------------------------------


def add_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="RUNS_OR_TASKS",
        help="a registered source and its part (<source>:<part>; see docs/annotation.md) or a "
        "run directory",
    )
    parser.add_argument("--kind", choices=KINDS, default="multi-choice", help="item kind")
    parser.add_argument("--n", type=int, default=100, help="items to sample (default 100)")
    parser.add_argument("--stratify", metavar="KEY", help="sample proportionally per KEY value")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument(
        "-o",
        "--output",
        dest="out",
        required=True,
        metavar="FILE",
        help="items file (.jsonl or .csv)",
    )


def _load_items(spec: str) -> list[GoldItem]:
    registry = discover()
    sources = registry.annotation_sources
    path = Path(spec)
    config: dict[str, Any] = {}
    if path.is_dir():
        from todeval.runner.store import RunDirectory

        run = RunDirectory(path)
        if not run.exists():
            raise BadInputError(f"{path}: not a run directory (no manifest)")
        manifest = run.read_manifest()
        name, rest, config = manifest.benchmark, "", dict(manifest.config)
    else:
        name, _, rest = spec.partition(":")
        looks_like_path = "/" in spec or spec.startswith(".") or (name not in sources and not rest)
        if name not in sources and looks_like_path and not path.exists():
            raise BadInputError(f"{spec}: no such run directory")
    if name not in sources:
        raise choice_error("annotation source", name, list(sources))
    return _call(sources[name], rest, config)


def _call(source: AnnotationSource, spec: str, config: dict[str, Any]) -> list[GoldItem]:
    module, _, function = source.items.partition(":")
    items = getattr(importlib.import_module(module), function)(spec, config)
    return list(items)


def run_export(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise UsageError(f"--n {args.n}: must be at least 1")
    out = Path(args.out)
    if out.suffix not in (".jsonl", ".csv"):
        raise UsageError(f"-o {out}: the items file ends in .jsonl or .csv")
    if not out.parent.is_dir():
        raise UsageError(f"-o {out}: no such directory {out.parent}")
    items = [g for g in _load_items(args.source) if g.item.kind == args.kind]
    if not items:
        raise UsageError(f"--from {args.source}: no items of kind {args.kind}")
    sample = stratified_sample(items, args.n, args.stratify, args.seed)
    key = write_export(out, sample)
    print(f"wrote {len(sample)} of {len(items)} item(s) to {out}; the gold to {key}")
    return 0


# -- serve -----------------------------------------------------------------------------------


def add_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="an items file written by export (.jsonl)")
    parser.add_argument("--annotator", required=True, metavar="NAME", help="your name")
    parser.add_argument("--port", type=int, default=8766, help="port (default 8766; 0: any)")
    parser.add_argument(
        "--answers", metavar="FILE", help="answer file (default FILE.answers.NAME.jsonl)"
    )


def run_serve(args: argparse.Namespace) -> int:
    from todeval.annotation.server import serve_items

    path = Path(args.file)
    if path.suffix != ".jsonl":
        raise UsageError(f"{path}: serve reads a .jsonl items file (export -o FILE.jsonl)")
    answers = Path(args.answers) if args.answers else None
    return serve_items(path, args.annotator, port=args.port, answers=answers)


# -- agreement -------------------------------------------------------------------------------


def add_agreement(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILES", help="answer files (JSONL or CSV)")
    parser.add_argument(
        "--gold",
        nargs="?",
        const="",
        metavar="KEY",
        help="compare the majority with the gold: a key file, or (no value) the key "
        "next to the answer files",
    )
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run_agreement(args: argparse.Namespace) -> int:
    paths = [Path(f) for f in args.files]
    for p in paths:
        if not p.is_file():
            raise BadInputError(f"{p}: no such file")
    if args.resamples < 1:
        raise UsageError(f"--resamples {args.resamples}: must be at least 1")
    ratings = merge_answers(paths)
    if not ratings:
        raise BadInputError("no answers in " + ", ".join(map(str, paths)))
    gold = None
    if args.gold is not None:
        key = Path(args.gold) if args.gold else gold_for(paths)
        if key is None:
            raise UsageError("--gold: no key file found next to the answers; name it")
        gold = read_key(key)
    report = agreement_report(ratings, gold, seed=args.seed, resamples=args.resamples)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        sys.stdout.write(format_report(report))
    return 0


def _f(fig: Figure | None) -> str:
    if fig is None:
        return ""
    if math.isnan(fig.value):
        return "n/a"
    low = "n/a" if math.isnan(fig.low) else f"{fig.low:.3f}"
    high = "n/a" if math.isnan(fig.high) else f"{fig.high:.3f}"
    return f"{fig.value:.3f} [{low}, {high}]"


def format_report(report: AgreementReport) -> str:
    pct = round(report.level * 100)
    lines = [
        f"{report.n_items} item(s), {report.n_answers} answer(s), annotators: "
        + ", ".join(report.annotators),
        f"{pct}% bootstrap intervals over items ({report.resamples} resamples)",
        "",
    ]
    gold = any(r.gold_cohen is not None for r in report.labels)
    head = ["label", "share", "cohen", "fleiss", "alpha", *(["majority-vs-gold"] if gold else [])]
    rows = [head]
    for r in report.labels:
        row = [r.label, f"{r.prevalence:.2f}", _f(r.cohen), _f(r.fleiss), _f(r.alpha)]
        if gold:
            row.append(_f(r.gold_cohen))
        rows.append(row)
    widths = [max(len(row[c]) for row in rows) for c in range(len(head))]
    for row in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    lines += [
        "",
        f"label-set alpha (MASI distance): {_f(report.masi_alpha)}",
        f"label-set alpha (exact match):   {_f(report.exact_alpha)}",
    ]
    if report.gold_exact is not None:
        lines.append(f"majority set equals gold:        {_f(report.gold_exact)}")
    return "\n".join(lines) + "\n"


__all__ = [
    "add_agreement",
    "add_export",
    "add_serve",
    "format_report",
    "run_agreement",
    "run_export",
    "run_serve",
]
