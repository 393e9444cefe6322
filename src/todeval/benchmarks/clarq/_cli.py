"""``todeval score clarq`` and ``todeval data clarq``."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from todeval.backends.factory import make_backend, model_info, resolve_entry
from todeval.backends.spec import load_models_file
from todeval.backends.types import Backend
from todeval.benchmarks.clarq._judge import RECORDED_JUDGE, Judge, VerdictStore
from todeval.benchmarks.clarq._original import TranscriptFile, read_original
from todeval.benchmarks.clarq._report import format_check, format_summary, format_task
from todeval.benchmarks.clarq._scoring import ClarqScore, score_transcripts_async
from todeval.benchmarks.clarq._tasks import read_tasks
from todeval.benchmarks.clarq._text import LANGUAGES, Language
from todeval.benchmarks.clarq.rundir import RunTranscripts, is_run_directory, read_run
from todeval.core.files import write_output
from todeval.errors import BadInputError, UsageError
from todeval.stats.bootstrap import DEFAULT_RESAMPLES


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "transcripts",
        nargs="+",
        type=Path,
        metavar="TRANSCRIPTS",
        help="released result files (results/l2l_*.json, .json.gz) or todeval run clarq "
        "directories; each is scored on its own",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="OUT",
        help="write the Summary JSON here (with several files: a directory, one "
        "<name>.summary.json per file)",
    )
    parser.add_argument(
        "--judge-model",
        metavar="SPEC",
        help="judge for verdicts not in the cache (openai:<model>@<url> or a models-file "
        f"name); default: only the recorded {RECORDED_JUDGE} verdicts, nothing is called",
    )
    parser.add_argument("--models-file", type=Path, metavar="FILE", help="models file (YAML)")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="never call a model: a verdict not in the cache is reported as unjudged",
    )
    parser.add_argument(
        "--judge-cache",
        type=Path,
        metavar="FILE",
        help="the user's verdict file (JSON lines; default: clarq_verdicts.jsonl next to the "
        "response cache)",
    )
    parser.add_argument(
        "--lang",
        choices=("auto", *LANGUAGES),
        default="auto",
        help="language of the shipped tasks the entries are matched with (auto: detected)",
    )
    parser.add_argument(
        "--episodes", type=Path, metavar="FILE", help="also write per-dialogue scores (JSON lines)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    parser.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (2000)"
    )


def _write(path: Path, text: str) -> None:
    write_output(path, text)  # whole or not at all; a failure is one line, exit 3


def _outputs(inputs: list[Path], output: Path | None) -> list[Path | None]:
    if output is None:
        return [None] * len(inputs)
    if len(inputs) == 1:
        return [output]
    names = [f"{p.name.removesuffix('.gz').removesuffix('.json')}.summary.json" for p in inputs]
    names = [n if n != ".summary.json" else "run.summary.json" for n in names]
    if len(set(names)) != len(names):
        raise UsageError("several transcript files share a name: score them one by one")
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(
            f"{output}: cannot create the directory ({exc.strerror or exc})"
        ) from None
    return [output / name for name in names]


def _judge_model_name(args: argparse.Namespace) -> str:
    models = load_models_file(args.models_file) if args.models_file is not None else None
    name, entry = resolve_entry(args.judge_model, models)
    return model_info(name, entry).model


async def _score_all(
    args: argparse.Namespace, files: list[TranscriptFile], store: VerdictStore
) -> list[ClarqScore]:
    backend: Backend | None = None
    model = RECORDED_JUDGE
    if args.judge_model is not None:
        if args.offline:
            model = _judge_model_name(args)
        else:
            backend = make_backend(args.judge_model, args.models_file, cache=None, seed=args.seed)
            model = backend.info.model
    try:
        scores = []
        for f in files:
            if isinstance(f, RunTranscripts):
                store.add_layer(f.verdicts)  # keyed by content and judge: valid everywhere
            judge = Judge(store, model=model, backend=backend, seed=args.seed)
            scores.append(
                await score_transcripts_async(
                    f.records,
                    judge,
                    seed=args.seed,
                    resamples=args.resamples,
                    sources=[f.source],
                    warnings=[*f.warnings, *_run_notes(f, args.judge_model)],
                    release_rule=args.judge_model is None,
                )
            )
        return scores
    finally:
        if backend is not None:
            await backend.aclose()


def _run_notes(f: TranscriptFile, judge_model: str | None) -> list[str]:
    if not isinstance(f, RunTranscripts) or f.judge_model in (None, judge_model):
        return []
    return [
        f"the run was judged by {f.judge_model!r}; pass --judge-model {f.judge_model} to "
        "score it with the verdicts its episodes obtained"
    ]


def _read(path: Path, language: Language | None) -> TranscriptFile:
    if is_run_directory(path):
        return read_run(path)
    return read_original(path, language=language)


def run_score(args: argparse.Namespace) -> int:
    if args.resamples < 1:
        raise UsageError("--resamples must be at least 1")
    if args.models_file is not None and args.judge_model is None:
        raise UsageError("--models-file needs --judge-model")
    language: Language | None = None if args.lang == "auto" else args.lang
    files = [_read(path, language) for path in args.transcripts]
    outputs = _outputs(list(args.transcripts), args.output)
    store = VerdictStore.default(args.judge_cache)
    scores = asyncio.run(_score_all(args, files, store))
    if store.skipped_lines:
        print(f"note: {store.skipped_lines} unreadable lines in {store.path} were ignored")
    for i, (score, out) in enumerate(zip(scores, outputs, strict=True)):
        if i:
            print()
        print(format_summary(score.summary))
        if out is not None:
            _write(out, score.summary.model_dump_json(indent=2) + "\n")
    if args.episodes is not None:
        _write(
            args.episodes,
            "".join(e.model_dump_json() + "\n" for score in scores for e in score.episodes),
        )
    return 0


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="load every task: counts, tree sizes and depths per split, and every failure",
    )
    parser.add_argument(
        "--show", metavar="TASK_ID", help="print one task (e.g. en/test/Gather_Resources-0)"
    )
    parser.add_argument(
        "--lang", choices=("all", *LANGUAGES), default="all", help="language(s) (all)"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="check a copy of the upstream data (English/ and Chinese/ task files) instead "
        "of the package data",
    )


def run_data(args: argparse.Namespace) -> int:
    langs: list[Language] = list(LANGUAGES) if args.lang == "all" else [args.lang]
    if args.show is not None:
        lang = args.show.split("/", 1)[0]
        if lang not in LANGUAGES:
            raise UsageError(f"task ids start with en/ or zh/, not {args.show!r}")
        load = read_tasks(lang, args.data_dir)
        for task in load.tasks:
            if task.task_id == args.show:
                print(format_task(task))
                return 0
        raise UsageError(f"no task {args.show!r} (ids look like en/test/Gather_Resources-0)")
    loads = [read_tasks(lang, args.data_dir) for lang in langs]
    source = str(args.data_dir) if args.data_dir is not None else "package data"
    print(format_check(loads, source))
    if args.check and any(load.failures for load in loads):
        return 3
    return 0


__all__ = ["add_data_arguments", "add_score_arguments", "run_data", "run_score"]
