"""The blind "which one is the person?" test: pairwise annotation items and their scorer.

Items (``todeval annotate export --from booking-realism:SET[,user-model=SPEC][,n=N]
[,seed=S][,models-file=FILE] --kind pairwise``): for each of the first ``n`` dialogues of the
shipped MultiWOZ ``test`` or ``dev`` goals (the ones the corpus user replays), one prefix
ending in a system turn is drawn from ``seed``; the item shows that prefix and two candidate
next customer turns, the person's real one and the LLM user's continuation of the same
history, in an order drawn from ``seed``; the key says which is the person.

The simulator: the LLM user (its own brief and prompts, the goal of the dialogue) is given the
prefix as its conversation so far -- the person's turns as its own -- and says the next turn.
A continuation that is only the protocol's ``done`` is dropped (nobody ends a MultiWOZ
dialogue with the token). The agenda user is excluded: its state (the agenda stack, what it
has been told, what it has booked) is built by acting in the dialogue, and it has no reader
that recovers that state from someone else's turns.

Scorer (:func:`blind_score`): per annotator and over all answers, the share of items where the
person was picked, with a Wilson interval (50% = the simulator cannot be told from a person);
the majority vote per item the same way; with two or more annotators, their agreement (Cohen
and Fleiss kappa from :mod:`todeval.annotation.agreement`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from todeval.annotation.agreement import Figure, agreement_report
from todeval.annotation.items import Candidate, ContextTurn, GoldItem, Item
from todeval.backends.cache import ResponseCache, default_cache_path
from todeval.backends.factory import make_backend
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks.booking.llm_user import LLMUser
from todeval.benchmarks.booking.tasks import BookingTask, load_tasks
from todeval.benchmarks.booking.users.corpus import CORPUS_TASK_SETS, DONE
from todeval.errors import UsageError
from todeval.stats.proportions import wilson_interval

SOURCE = "booking-realism"
QUESTION = (
    "One of the two next customer turns is what the person in the original conversation "
    "wrote; the other was written by a user simulator. Which one is the person?"
)
CUSTOMER, CLERK = "Customer", "Clerk"


class BlindSpec(BaseModel):
    task_set: str = "test"
    user_model: str | None = None
    models_file: str | None = None
    n: int | None = None
    seed: int = 0
    cache: bool = True


def parse_spec(spec: str) -> BlindSpec:
    """``SET[,user-model=SPEC][,n=N][,seed=S][,models-file=FILE][,cache=no]``."""
    head, *options = [p for p in spec.split(",")] if spec else ["test"]
    values: dict[str, Any] = {"task_set": head or "test"}
    for opt in options:
        key, sep, value = opt.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in ("user_model", "models_file", "n", "seed", "cache"):
            raise UsageError(
                f"--from {SOURCE}:{spec}: unknown option {opt!r} (expected user-model=SPEC, "
                "n=N, seed=S, models-file=FILE or cache=no)"
            )
        if key in ("n", "seed"):
            try:
                values[key] = int(value)
            except ValueError:
                raise UsageError(f"--from {SOURCE}:{spec}: {key} is an integer") from None
        elif key == "cache":
            values[key] = value.lower() not in ("no", "false", "0")
        else:
            values[key] = value
    parsed = BlindSpec(**values)
    if parsed.task_set not in CORPUS_TASK_SETS:
        raise UsageError(
            f"--from {SOURCE}:{spec}: the corpus dialogues are in {', '.join(CORPUS_TASK_SETS)}"
        )
    if parsed.user_model is None:
        raise UsageError(f"--from {SOURCE}:{spec}: name the LLM user's model: ,user-model=SPEC")
    return parsed


def prefix_points(task: BookingTask) -> list[int]:
    """Indices of corpus user turns that follow a system turn (a prefix to continue)."""
    turns = task.corpus_turns
    return [
        i
        for i in range(1, len(turns))
        if turns[i].speaker == "user" and turns[i - 1].speaker == "system" and turns[i].text.strip()
    ]


async def continue_history(
    model: Backend, task: BookingTask, prefix: Sequence[tuple[str, str]], seed: int
) -> str:
    """The LLM user's next turn after ``prefix`` ((speaker, text), the customer's first)."""
    user = LLMUser(model)
    user.seed = seed % (2**31)
    history = [
        ChatMessage(role="system", content=user.prompts.render("user", goal=task.message)),
        ChatMessage(role="user", content=user.prompts.render("user_opening")),
    ]
    for speaker, text in prefix[:-1]:
        role = "assistant" if speaker == "user" else "user"
        history.append(ChatMessage(role=role, content=text))
    user.history = history
    reply = await user.respond(prefix[-1][1])
    return reply.text


async def _items(spec: BlindSpec, model: Backend) -> list[GoldItem]:
    tasks = [t for t in load_tasks(spec.task_set) if prefix_points(t)]
    if spec.n is not None:
        tasks = tasks[: spec.n]
    out = []
    for task in tasks:
        rng = random.Random(f"{SOURCE}|{spec.seed}|{task.task_id}")
        point = rng.choice(prefix_points(task))
        prefix = [(t.speaker, t.text.strip()) for t in task.corpus_turns[:point]]
        real = task.corpus_turns[point].text.strip()
        simulated = await continue_history(model, task, prefix, spec.seed)
        if not simulated.strip() or simulated.strip().lower() == DONE:
            continue
        real_id = rng.choice(["a", "b"])
        texts = {real_id: real, ("b" if real_id == "a" else "a"): simulated}
        item = Item(
            id=f"{task.task_id}@{point}",
            kind="pairwise",
            source=f"{SOURCE}/{spec.task_set}",
            question=QUESTION,
            turns=[
                ContextTurn(speaker=CUSTOMER if s == "user" else CLERK, text=t) for s, t in prefix
            ],
            candidates=[Candidate(id=c, text=texts[c]) for c in ("a", "b")],
            strata={"simulator": "llm", "depth": str(min(point // 2, 4))},
        )
        out.append(GoldItem(item=item, gold=[real_id]))
    return out


def items(spec: str, config: Mapping[str, Any]) -> list[GoldItem]:
    """The registered annotation source (see the module docstring for ``spec``)."""
    parsed = parse_spec(spec)
    assert parsed.user_model is not None
    cache = ResponseCache(default_cache_path()) if parsed.cache else None
    model = make_backend(parsed.user_model, parsed.models_file, cache=cache, seed=parsed.seed)

    async def run() -> list[GoldItem]:
        try:
            return await _items(parsed, model)
        finally:
            await model.aclose()

    return asyncio.run(run())


# -- scoring ---------------------------------------------------------------------------------


class Accuracy(BaseModel):
    who: str
    correct: int
    n: int
    value: float | None
    wilson_low: float | None
    wilson_high: float | None


class BlindReport(BaseModel):
    items: int
    annotators: list[str]
    per_annotator: list[Accuracy]
    all_answers: Accuracy
    majority: Accuracy
    majority_ties: int = 0
    cohen: Figure | None = None
    fleiss: Figure | None = None
    note: str = (
        "accuracy = share of answers picking the person; 0.5 = indistinguishable; "
        "95% Wilson intervals; all-answers pools annotators (answers to one item are not "
        "independent); majority: items without a tied vote"
    )


def _accuracy(who: str, correct: int, n: int) -> Accuracy:
    if n == 0:
        return Accuracy(who=who, correct=0, n=0, value=None, wilson_low=None, wilson_high=None)
    low, high = wilson_interval(correct, n)
    return Accuracy(
        who=who, correct=correct, n=n, value=correct / n, wilson_low=low, wilson_high=high
    )


def blind_score(
    ratings: Mapping[str, Mapping[str, frozenset[str]]],
    key: Mapping[str, frozenset[str]],
    *,
    seed: int = 0,
    resamples: int = 1000,
) -> BlindReport:
    """Accuracy of identifying the person, against ``key`` (items the key lacks are ignored)."""
    scored = {i: r for i, r in ratings.items() if i in key}
    annotators = sorted({a for r in scored.values() for a in r})
    per = []
    for a in annotators:
        hits = [r[a] == key[i] for i, r in scored.items() if a in r]
        per.append(_accuracy(a, sum(hits), len(hits)))
    every = [r[a] == key[i] for i, r in scored.items() for a in r]
    right_items = ties = 0
    for i, r in scored.items():
        right = sum(1 for s in r.values() if s == key[i])
        wrong = len(r) - right
        right_items += right > wrong
        ties += right == wrong
    report = BlindReport(
        items=len(scored),
        annotators=annotators,
        per_annotator=per,
        all_answers=_accuracy("all", sum(every), len(every)),
        majority=_accuracy("majority", right_items, len(scored) - ties),
        majority_ties=ties,
    )
    if len(annotators) >= 2:
        agree = agreement_report(scored, None, seed=seed, resamples=resamples)
        first = next((f for f in agree.labels if f.label == "a"), None) or (
            agree.labels[0] if agree.labels else None
        )
        if first is not None:
            report.cohen, report.fleiss = first.cohen, first.fleiss
    return report


def _acc(a: Accuracy) -> str:
    if a.value is None:
        return "n/a"
    return f"{a.value:.3f} [{a.wilson_low:.3f}, {a.wilson_high:.3f}]  ({a.correct}/{a.n})"


def _fig(f: Figure | None) -> str:
    if f is None:
        return "n/a"
    return f"{f.value:.3f} [{f.low:.3f}, {f.high:.3f}]"


def format_blind(report: BlindReport) -> str:
    lines = [
        f"{report.items} item(s), annotators: {', '.join(report.annotators) or 'none'}",
        "accuracy of identifying the person (0.5 = indistinguishable), 95% Wilson interval:",
    ]
    for a in [*report.per_annotator, report.all_answers, report.majority]:
        lines.append(f"  {a.who}: {_acc(a)}")
    if report.majority_ties:
        lines.append(f"  ({report.majority_ties} item(s) with a tied vote left out of majority)")
    if len(report.annotators) >= 2:
        lines.append(f"agreement: cohen {_fig(report.cohen)}, fleiss {_fig(report.fleiss)}")
    return "\n".join(lines) + "\n"


__all__ = [
    "BlindReport",
    "blind_score",
    "continue_history",
    "format_blind",
    "items",
    "parse_spec",
    "prefix_points",
]
