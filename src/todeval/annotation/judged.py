"""An LLM judge beside people (docs/annotation.md).

* ``todeval annotate judge ITEMS --judge-model SPEC``: a model answers every exported item as an
  annotator would (context, question, candidates -> a JSON choice) and its answers go to an
  answer file (annotator ``judge-<model>``); every call's tokens, cost and latency are summed
  and printed;
* ``todeval annotate ppi``: a judge's labels on every item, people's on a sample -> the judge's
  agreement with people and a prediction-powered estimate of the people's rate.

The judge's labels are an answer file like a person's (``{"item", "annotator", "choice"}`` per
line), covering every item; people's answer files cover a sample (their majority per item).
The rate is the share of items whose label set holds ``--positive``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from todeval.annotation.agreement import cohen_kappa, majority
from todeval.annotation.items import Answer, Item, answers_path, merge_answers, now, read_items
from todeval.core.records import CallUsage, RoleUsage, sum_usage
from todeval.core.redact import redact
from todeval.errors import BadInputError, UsageError
from todeval.stats.ppi import Interval, PPIEstimate, ppi_mean

if TYPE_CHECKING:
    from todeval.backends.types import Backend


class JudgeCheck(BaseModel):
    """``todeval annotate ppi --json``."""

    positive: str
    judge: str = Field(description="the judge file's annotator")
    items: int = Field(description="items the judge labelled")
    labelled: int = Field(description="of them, items people labelled too")
    accuracy: float = Field(description="share of labelled items where judge and people agree")
    kappa: float | None = Field(description="Cohen's kappa of judge and people on the rate")
    estimate: PPIEstimate


JUDGE_ROLE = "annotation_judge"
PROMPT = """You are annotating one item for a research study. Read the context and answer the
question by choosing {how} of the candidates below.

{context}

Question: {question}

Candidates:
{candidates}

Reply with one JSON object and nothing else: {{"choice": [<candidate id>{more}]}}"""


class JudgeRun(BaseModel):
    """What ``todeval annotate judge`` did (printed; the answers go to the answer file)."""

    model: str
    items: int
    answered: int
    failures: list[str] = Field(default_factory=list, description="items with no valid answer")
    usage: RoleUsage
    output: str


def judge_prompt(item: Item) -> str:
    """The item as one prompt (our own wording): fields, the dialogue with the focus marked,
    the question and the candidates with their ids."""
    lines = [f"{f.name}: {f.value}" for f in item.fields]
    for turn in item.turns:
        mark = ">>> " if turn.focus else ""
        lines.append(f"{mark}{turn.speaker}: {turn.text}")
    candidates = [f"- {c.id}: {c.text}" for c in item.candidates]
    if item.cant_tell:
        candidates.append("- cant-tell: you cannot tell")
    return PROMPT.format(
        how="one or more" if item.multiple else "exactly one",
        context="\n".join(lines) or "(no context)",
        question=item.question,
        candidates="\n".join(candidates),
        more=", ..." if item.multiple else "",
    )


def parse_choice(item: Item, text: str) -> list[str] | None:
    """The choice in a judge's reply, if it is a valid answer to ``item``."""
    from todeval.dialogue.replies import ReplyChecker

    schema = {
        "type": "object",
        "properties": {"choice": {"type": "array", "items": {"type": "string"}}},
        "required": ["choice"],
    }
    checked = ReplyChecker(schema).check(text)
    if checked.value is None:
        return None
    choice = [str(c) for c in checked.value["choice"]]
    return None if item.check_answer(choice) else choice


async def judge_items(
    items: list[Item], backend: Backend, *, seed: int, concurrency: int
) -> tuple[dict[str, list[str]], list[CallUsage]]:
    """Each item's valid choice (items without one are left out) and every call's accounting."""
    import asyncio

    from todeval.backends.sampling import generate_accounted
    from todeval.backends.types import ChatMessage, GenerationRequest

    gate = asyncio.Semaphore(max(1, concurrency))
    usage: list[CallUsage] = []

    async def one(item: Item) -> tuple[str, list[str] | None]:
        request = GenerationRequest(
            messages=[ChatMessage(role="user", content=judge_prompt(item))],
            temperature=0.0,
            max_tokens=100,
            seed=seed,
        )
        async with gate:
            result = await generate_accounted(backend, request, role=JUDGE_ROLE, usage=usage)
        return item.id, parse_choice(item, result.text)

    found = await asyncio.gather(*(one(i) for i in items))
    return {item: choice for item, choice in found if choice is not None}, usage


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", metavar="ITEMS", help="an exported items file (JSONL)")
    parser.add_argument("--judge-model", required=True, metavar="SPEC", help="the judge's model")
    parser.add_argument("--models-file", default=None, metavar="FILE", help="named models")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="answer file (default: beside ITEMS)"
    )
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--concurrency", type=int, default=8, help="calls in flight (default 8)")
    parser.add_argument("--no-cache", action="store_true", help="bypass the response cache")


def run_judge(args: argparse.Namespace) -> int:
    import asyncio

    from todeval.backends.cache import ResponseCache, default_cache_path
    from todeval.backends.factory import make_backend
    from todeval.core.files import write_output
    from todeval.runner.naming import slug

    items_path = Path(args.items)
    if not items_path.is_file():
        raise BadInputError(f"{items_path}: no such file")
    items = read_items(items_path)
    cache = None if args.no_cache else ResponseCache(default_cache_path())
    backend = make_backend(args.judge_model, args.models_file, cache=cache, seed=args.seed)
    annotator = f"judge-{slug(backend.info.name)}"

    async def run() -> tuple[dict[str, list[str]], list[CallUsage]]:
        try:
            return await judge_items(items, backend, seed=args.seed, concurrency=args.concurrency)
        finally:
            await backend.aclose()

    choices, calls = asyncio.run(run())
    out = Path(args.output) if args.output else answers_path(items_path, annotator)
    stamp = now()
    rows = [
        Answer(
            item=i.id, annotator=annotator, choice=choices[i.id], at=stamp, export=items_path.stem
        )
        for i in items
        if i.id in choices
    ]
    write_output(out, "".join(r.model_dump_json() + "\n" for r in rows))
    report = JudgeRun(
        model=redact(backend.info.name),  # a spec as given: no ?api_key= of its URL
        items=len(items),
        answered=len(rows),
        failures=[i.id for i in items if i.id not in choices],
        usage=sum_usage(calls).get(JUDGE_ROLE, RoleUsage()),
        output=str(out),
    )
    u = report.usage
    print(
        f"judge {report.model}: answered {report.answered} of {report.items} items "
        f"({len(report.failures)} without a valid answer) -> {out}\n"
        f"calls {u.calls} ({u.cached_calls} cached), tokens {u.prompt_tokens:,}{u.token_marks} in "
        f"+ {u.completion_tokens:,}{u.token_marks} out, cost ${u.cost_usd:.4f}, "
        f"latency {u.latency_s:.1f} s"
    )
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("people", nargs="+", metavar="ANSWERS", help="people's answer files")
    parser.add_argument(
        "--judge", required=True, metavar="FILE", help="the judge's answers on every item"
    )
    parser.add_argument(
        "--positive", required=True, metavar="LABEL", help="the label whose rate is estimated"
    )
    parser.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def check_judge(
    judge_path: Path, people_paths: list[Path], positive: str, level: float = 0.95
) -> JudgeCheck:
    for path in [judge_path, *people_paths]:
        if not path.is_file():
            raise BadInputError(f"{path}: no such file")
    judged = merge_answers([judge_path])
    judges = {a for answers in judged.values() for a in answers}
    if len(judges) != 1:
        raise BadInputError(f"{judge_path}: a judge file holds one annotator, not {len(judges)}")
    (judge,) = judges
    people = merge_answers(people_paths)
    verdicts = {item: positive in answers[judge] for item, answers in judged.items()}
    labels = {
        item: positive in majority({a: s for a, s in answers.items() if a != judge})
        for item, answers in people.items()
        if any(a != judge for a in answers)
    }
    labelled = sorted(set(verdicts) & set(labels))
    unlabelled = sorted(set(verdicts) - set(labels))
    if len(labelled) < 2 or len(unlabelled) < 2:
        raise BadInputError(
            f"people labelled {len(labelled)} of the judge's {len(verdicts)} items: PPI needs at "
            "least two labelled and two unlabelled items"
        )
    f_lab = [float(verdicts[i]) for i in labelled]
    y = [float(labels[i]) for i in labelled]
    kappa = cohen_kappa(f_lab, y)
    return JudgeCheck(
        positive=positive,
        judge=judge,
        items=len(verdicts),
        labelled=len(labelled),
        accuracy=sum(a == b for a, b in zip(f_lab, y, strict=True)) / len(y),
        kappa=None if kappa != kappa else kappa,  # NaN: one label only
        estimate=ppi_mean([float(verdicts[i]) for i in unlabelled], f_lab, y, level=level),
    )


def format_check(check: JudgeCheck) -> str:
    e = check.estimate
    level = round(e.level * 100)

    def line(name: str, iv: Interval) -> str:
        return f"{name:<22}{iv.value:.3f} [{iv.ci_low:.3f}, {iv.ci_high:.3f}]  n={iv.n}"

    kappa = "undefined (one label only)" if check.kappa is None else f"{check.kappa:.3f}"
    return "\n".join(
        [
            f"rate of {check.positive!r}: judge {check.judge!r} on {check.items} items, people "
            f"on {check.labelled}",
            f"judge vs people: agreement {check.accuracy:.3f}, Cohen's kappa {kappa}, judge bias "
            f"{e.judge_bias:+.3f}",
            f"estimate ({level}% CI):",
            line("  judge only (biased)", e.judge_only),
            line("  people only", e.people_only),
            line("  prediction-powered", e.ppi),
            "",
        ]
    )


def run(args: argparse.Namespace) -> int:
    if not 0 < args.level < 1:
        raise UsageError("--level must lie between 0 and 1")
    check = check_judge(Path(args.judge), [Path(p) for p in args.people], args.positive, args.level)
    sys.stdout.write(check.model_dump_json(indent=2) + "\n" if args.json else format_check(check))
    return 0
