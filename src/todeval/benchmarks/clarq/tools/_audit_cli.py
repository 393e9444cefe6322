"""``todeval clarq audit``: the teacher-forced provider audit on a transcript file."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from todeval.backends.pool import ModelPool
from todeval.benchmarks.clarq._original import read_original
from todeval.benchmarks.clarq._text import LANGUAGES, Language
from todeval.benchmarks.clarq.protocol import Provider
from todeval.benchmarks.clarq.providers import MODEL_PROVIDERS, PROVIDER, PROVIDERS
from todeval.benchmarks.clarq.providers.llm import PACKAGE
from todeval.benchmarks.clarq.tools.audit import (
    CLASSES,
    Agreement,
    AuditResult,
    AuditSummary,
    audit_provider,
)
from todeval.console.tables import fmt_estimate, render_rows
from todeval.core.files import write_output
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet, read_overrides
from todeval.errors import UsageError
from todeval.stats.bootstrap import DEFAULT_RESAMPLES


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transcripts",
        type=Path,
        required=True,
        metavar="FILE",
        help="a released result file (results/l2l_*.json[.gz]): its provider is the reference",
    )
    parser.add_argument(
        "--provider",
        default="rule",
        metavar="NAME",
        help=f"provider under test: {', '.join(PROVIDERS)} or package.module:Class (rule)",
    )
    parser.add_argument(
        "--provider-model",
        metavar="SPEC",
        help="the provider's model (openai:<model>@<url>, scripted:<file> or a models-file name)",
    )
    parser.add_argument("--models-file", type=Path, metavar="FILE", help="models file (YAML)")
    parser.add_argument(
        "--prompts", type=Path, metavar="DIR", help="override provider templates (<name>.txt)"
    )
    parser.add_argument(
        "--constrained", action="store_true", help="ask the backend to enforce the JSON schemas"
    )
    parser.add_argument("--temperature", type=float, default=0.0, help="(0)")
    parser.add_argument("--max-tokens", type=int, metavar="N", help="reply cap per call")
    parser.add_argument(
        "--limit", type=int, metavar="N", help="audit the first N dialogues of the file only"
    )
    parser.add_argument(
        "--lang",
        choices=("auto", *LANGUAGES),
        default="auto",
        help="language of the shipped tasks the entries are matched with (auto: detected)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="OUT", help="write the audit summary (JSON) here"
    )
    parser.add_argument(
        "--turns", type=Path, metavar="FILE", help="also write every audited turn (JSON lines)"
    )
    parser.add_argument(
        "--max-concurrency", type=int, default=16, metavar="N", help="turns in flight (16)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    parser.add_argument("--cache-path", metavar="FILE", help="response cache file")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    parser.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (2000)"
    )


def _check(args: argparse.Namespace) -> None:
    if args.resamples < 1:
        raise UsageError("--resamples must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    if args.models_file is not None and args.provider_model is None:
        raise UsageError("--models-file needs --provider-model")
    if args.provider_model is not None and args.provider == "rule":
        raise UsageError("the rule provider takes no model: drop --provider-model")
    if args.provider_model is None and args.provider in MODEL_PROVIDERS:
        raise UsageError(f"the {args.provider} provider needs a model: pass --provider-model SPEC")


def _write(path: Path, text: str) -> None:
    write_output(path, text)  # whole or not at all; a failure is one line, exit 3


async def _audit(args: argparse.Namespace) -> AuditResult:
    language: Language | None = None if args.lang == "auto" else args.lang
    source = read_original(args.transcripts, language=language)
    overrides = read_overrides(args.prompts) if args.prompts is not None else None
    prompts = PromptSet.load(PACKAGE, overrides)
    factory = PROVIDER.resolve(args.provider)
    pool = ModelPool(
        str(args.models_file) if args.models_file is not None else None,
        cache=not args.no_cache,
        cache_path=args.cache_path,
        seed=args.seed,
    )
    try:
        model = pool.maybe(args.provider_model)
        options = PlayerOptions(
            role="provider",
            model=model,
            constrained=args.constrained,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            prompts=prompts,
        )
        factory.build(options)  # a configuration error shows before any turn

        def make() -> Provider:
            return factory.build(options)

        return await audit_provider(
            make,
            source,
            name=args.provider,
            model=model.info.model if model is not None else None,
            limit=args.limit,
            concurrency=args.max_concurrency,
            seed=args.seed,
            resamples=args.resamples,
        )
    finally:
        await pool.aclose()


SCOPE_TITLES = {
    "later": "later turns",
    "gate": "gate turns",
    "all": "all turns",
}


_ROWS: tuple[tuple[str, str], ...] = (
    ("accuracy", "accuracy"),
    ("kappa", "Cohen's kappa"),
    ("node_agreement", "node ids, both released"),
    ("strict_accuracy", "strict accuracy (class + ids)"),
    ("baseline_accuracy", "always-release accuracy"),
    ("baseline_kappa", "always-release kappa"),
    ("baseline_node_agreement", "its node ids (first available)"),
    ("baseline_strict_accuracy", "its strict accuracy"),
    ("kappa_gain", "kappa gain over it"),
)


def agreement_rows(scopes: dict[str, Agreement]) -> tuple[list[str], list[list[str]]]:
    """The agreement table: one column per scope, one row per figure (value [95% CI])."""
    names = list(scopes)
    header = ["", *(f"{SCOPE_TITLES[s]} ({scopes[s].turns})" for s in names)]
    rows = []
    for key, title in _ROWS:
        cells = []
        for scope in names:
            a = scopes[scope]
            cell = fmt_estimate(getattr(a, key))
            if key == "node_agreement" and a.both_released:
                cell += f" n={a.both_released}"
            cells.append(cell)
        rows.append([title, *cells])
    return header, rows


def format_audit(summary: AuditSummary) -> str:
    """The audit as console tables: agreement per scope, then the later turns' confusion."""
    rec = summary.reconstruction
    model = f" ({summary.model})" if summary.model else ""
    decisions = ", ".join(f"{k} {v}" for k, v in rec.decisions.items())
    share = f"{rec.later_release_share:.3f}" if rec.later_release_share is not None else "-"
    lines = [
        f"provider audit: {summary.provider}{model} vs the reference provider of "
        f"{summary.source} ({summary.language})",
        f"reference: {rec.dialogues} dialogues, {rec.turns} provider turns ({decisions}); "
        f"releases are {share} of the {rec.later_turns} later turns; 'enough' in "
        f"{rec.enough_dialogues} dialogues",
        "",
    ]
    header, rows = agreement_rows(summary.scopes)
    lines.append(render_rows(header, rows))
    later = summary.scopes.get("later") or summary.scopes.get("all")
    if later is not None:
        shown = [
            c.value
            for c in CLASSES
            if later.reference_counts[c.value] or later.predicted_counts[c.value]
        ]
        matrix = [[ref, *(str(later.confusion[ref][pred]) for pred in shown)] for ref in shown]
        title = "later turns" if "later" in summary.scopes else "all turns"
        lines += ["", f"confusion, {title} (rows: reference, columns: {summary.provider})"]
        lines.append(render_rows(["reference", *shown], matrix))
    lines += [
        "",
        "CIs: percentile bootstrap over dialogues (all turns of a drawn dialogue), "
        f"{summary.resamples} resamples, seed {summary.seed}; kappa gain is paired. Kappa is "
        "undefined ('-') where both sides use one class.",
    ]
    if summary.usage.get("calls"):
        u = summary.usage
        lines.append(
            f"provider calls: {u['calls']} ({u['cached_calls']} cached), "
            f"{u['prompt_tokens']} prompt + {u['completion_tokens']} completion tokens"
        )
    lines += [f"warning: {w}" for w in summary.warnings]
    if summary.error_examples:
        lines.append(f"first failure: {summary.error_examples[0]}")
    return "\n".join(lines)


def run_audit(args: argparse.Namespace) -> int:
    _check(args)
    result = asyncio.run(_audit(args))
    print(format_audit(result.summary))
    if args.output is not None:
        _write(args.output, result.summary.model_dump_json(indent=2) + "\n")
    if args.turns is not None:
        _write(args.turns, "".join(t.model_dump_json() + "\n" for t in result.turns))
    return 0


__all__ = ["add_audit_arguments", "agreement_rows", "format_audit", "run_audit"]
