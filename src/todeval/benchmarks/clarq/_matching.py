"""Success of one dialogue: the original evaluator's matching steps, one function each.

Given the gold responses 0..n, their purposes and the predictions (provider answers after the
first), success is decided by the first step that settles it:

1. ``exact`` -- the predictions equal gold 1..n, in order, after stripping a ``jax:`` prefix
   and whitespace (:func:`todeval.benchmarks.clarq._text.strip_provider_prefix`);
2. both sides are lower-cased if gold 1 is English by :func:`detect_language` (ties are
   Chinese), then ``member`` -- every gold sentence is a whole prediction;
3. ``substring`` -- trailing sentence marks stripped, every gold sentence contained in some
   prediction. Covered gold sentences and the predictions that contain one are removed; if
   gold is left but no prediction is, the route is ``no_prediction`` (failure);
4. ``judge`` -- one question per leftover gold sentence, in order, against the leftover
   predictions; the loop stops at the first verdict that is a clear no, and the last verdict
   obtained decides (a verdict without a ``match`` field does not stop the loop but, if last,
   is a failure).

Faithful details of step 3: covered gold sentences and covering predictions go into one set,
so a leftover string equal to any covered string is removed too, duplicates included; a gold
sentence's purpose is looked up by its cleaned text (for duplicates, the last one's).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from todeval.benchmarks.clarq._judge import JudgeAnswer, JudgeQuestion
from todeval.benchmarks.clarq._text import (
    Language,
    detect_language,
    strip_provider_prefix,
    strip_sentence_end,
)

Route = Literal["exact", "member", "substring", "no_prediction", "judge", "no_purpose", "missing"]
ROUTES: tuple[Route, ...] = (
    "exact", "member", "substring", "no_prediction", "judge", "no_purpose", "missing"
)  # fmt: skip
"""``no_purpose``: leftover gold without a purpose (dev tasks): string matching only, a
failure. ``missing``: no dialogue for the task, a failure."""


class Leftovers(BaseModel):
    """What reaches the judge: leftover gold sentences with their purposes, and predictions."""

    language: Language = Field(description="of gold 1: decides lower-casing")
    gold: list[str]
    purposes: list[str | None]
    predictions: list[str]


class Prematch(BaseModel):
    """The string steps' result: a decided route, or leftovers for the judge."""

    route: Route
    success: bool | None = Field(description="None: the judge decides")
    leftovers: Leftovers | None = None


def normalise(lines: Sequence[str]) -> list[str]:
    """Step 1's cleaning: a case-insensitive ``jax:`` prefix and whitespace removed."""
    return [strip_provider_prefix(line) for line in lines]


def leftover_forms(gold: Sequence[str]) -> list[str]:
    """Gold 1..n written as a leftover gold sentence is (and as a judge question holds it):
    prefix and whitespace stripped, lower-cased if gold 1 is English, trailing marks removed."""
    wanted = normalise(gold[1:])
    if detect_language(wanted[0] if wanted else "") == "en":
        wanted = [g.lower() for g in wanted]
    return [strip_sentence_end(g) for g in wanted]


def substring_leftovers(
    gold: Sequence[str], predictions: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Step 3 on sentence-mark-stripped lists: the gold sentences and predictions left over."""
    covered: set[str] = set()
    for p in predictions:
        for g in gold:
            if g in p:
                covered.add(g)
                covered.add(p)
    return [g for g in gold if g not in covered], [p for p in predictions if p not in covered]


def prematch(gold: Sequence[str], purposes: Sequence[str], predictions: Sequence[str]) -> Prematch:
    """Steps 1-3 for gold responses 0..n, purposes of 1..n and the predictions."""
    wanted = normalise(gold[1:])
    given = normalise(predictions)
    if wanted == given:
        return Prematch(route="exact", success=True)
    language = detect_language(wanted[0] if wanted else "")
    if language == "en":
        wanted = [g.lower() for g in wanted]
        given = [p.lower() for p in given]
    if all(g in given for g in wanted):
        return Prematch(route="member", success=True)
    wanted = [strip_sentence_end(g) for g in wanted]
    given = [strip_sentence_end(p) for p in given]
    purpose_of = {g: (purposes[i] if i < len(purposes) else None) for i, g in enumerate(wanted)}
    gold_left, predictions_left = substring_leftovers(wanted, given)
    if not gold_left:
        return Prematch(route="substring", success=True)
    if not predictions_left:
        return Prematch(route="no_prediction", success=False)
    left_purposes = [purpose_of[g] for g in gold_left]
    if any(p is None for p in left_purposes):
        return Prematch(route="no_purpose", success=False)
    return Prematch(
        route="judge",
        success=None,
        leftovers=Leftovers(
            language=language, gold=gold_left, purposes=left_purposes, predictions=predictions_left
        ),
    )


class JudgeStep(BaseModel):
    """One judge question asked while deciding a dialogue."""

    gold: str
    answer: JudgeAnswer


class MatchResult(BaseModel):
    """How one dialogue's success was decided."""

    route: Route
    success: bool | None = Field(description="None: unjudged (a verdict was not available)")
    steps: list[JudgeStep] = Field(default_factory=list)

    @property
    def unjudged(self) -> bool:
        return self.success is None


AskJudge = Callable[[JudgeQuestion], Awaitable[JudgeAnswer]]


def judge_questions(leftovers: Leftovers) -> list[JudgeQuestion]:
    """The questions of step 4, one per leftover gold sentence, in order."""
    return [
        JudgeQuestion(
            language=detect_language(g),
            gold=g,
            purpose=purpose or "",
            predictions=leftovers.predictions,
        )
        for g, purpose in zip(leftovers.gold, leftovers.purposes, strict=True)
    ]


async def decide(pre: Prematch, ask: AskJudge) -> MatchResult:
    """Step 4 when the string steps left it open: ask the judge, stop at the first no."""
    if pre.leftovers is None:
        return MatchResult(route=pre.route, success=pre.success)
    steps: list[JudgeStep] = []
    last: JudgeAnswer | None = None
    for question in judge_questions(pre.leftovers):
        answer = await ask(question)
        steps.append(JudgeStep(gold=question.gold, answer=answer))
        if not answer.decided:
            return MatchResult(route="judge", success=None, steps=steps)
        last = answer
        if answer.match is False:
            break
    success = last is not None and last.match is True
    return MatchResult(route="judge", success=success, steps=steps)


async def match_dialogue(
    gold: Sequence[str], purposes: Sequence[str], predictions: Sequence[str], ask: AskJudge
) -> MatchResult:
    """All steps for one dialogue."""
    return await decide(prematch(gold, purposes, predictions), ask)


__all__ = [
    "ROUTES",
    "AskJudge",
    "JudgeStep",
    "Leftovers",
    "MatchResult",
    "Prematch",
    "Route",
    "decide",
    "judge_questions",
    "leftover_forms",
    "match_dialogue",
    "normalise",
    "prematch",
    "substring_leftovers",
]
