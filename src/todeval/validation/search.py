"""Adversary search: the best skill-less agent of a declared family, found, not listed.

A list of floor controls only holds off the attacks its authors thought of. A benchmark also
declares *families* of skill-less agents (:class:`AdversaryFamily`): a player that reads only
its role's view, with parameters (question templates, how many at once, which rows to book,
which features a text-blind learner reads, ...) each with a few choices. ``todeval validate``
searches every family within a budget of episodes and reports the best agent it found, its
parameters and its 95% CI; the suite fails when that best scores above the family's floor band.

The search (:func:`search`) is seeded and deterministic: random points of the space first
(half the budget), then hill climbing from the best point so far -- every neighbour (one
parameter moved to an adjacent choice) in a seeded order, moving to the first that scores
higher -- and, when a climb ends before the budget does, a fresh random start. Every point is
played on the same tasks with the same seed, so points are compared paired. Taking the best of
many noisy measurements overstates it; for a floor that bias errs on the side of failing.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from todeval.core.records import Estimate, Summary

Aggregate = Literal["micro", "macro"]
Params = dict[str, Any]


class AdversaryFamily(BaseModel):
    """A family of skill-less agents a benchmark must hold to its floor.

    ``play`` is ``"module:function"`` with ``function(job: AdversaryJob) -> Summary``: it plays
    the agent ``job.params`` describes (one choice per parameter of ``space``) on the
    benchmark's tasks, usually through :func:`play_run`. A family whose agents are one player
    with the point's parameters, in an otherwise default run, names ``seat`` (the config field
    of the role) and ``player`` instead (played by :func:`todeval.validation.play.play_seat`).
    ``space`` lists each parameter's choices *in order*: the hill climb moves a parameter to the
    choice before or after its current one, so put choices where neighbours are alike (1, 2, 4,
    8 questions a turn)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="unique in the suite, e.g. 'sweep/en'")
    description: str = Field(description="what the family's agents do, in one line")
    metric: str = Field(description="the headline metric in the summary")
    aggregate: Aggregate = "micro"
    low: float = 0.0
    high: float = Field(
        description="the floor band's upper end: the best agent must stay at or below"
    )
    space: Mapping[str, tuple[Any, ...]] = Field(description="each parameter's choices, in order")
    play: str | None = Field(
        None, description="'module:function' playing one point: (AdversaryJob) -> Summary"
    )
    seat: str | None = Field(None, description="or: the config field the family's player plays")
    player: str | None = Field(None, description="and that player (its name takes the point)")
    group: str = Field("", description="a variant the family belongs to (en, strict, ...)")
    benchmark: str | None = Field(None, description="the benchmark it plays (default: suite)")
    budget: int = Field(400, ge=1, description="episodes to spend when validate gives no --budget")
    tasks: int | None = Field(
        None, ge=1, description="tasks per point (default: validate's --limit, else every task)"
    )

    @model_validator(mode="after")
    def _check(self) -> AdversaryFamily:
        if not self.space:
            raise ValueError(f"family {self.name!r}: an empty parameter space")
        empty = [k for k, choices in self.space.items() if not choices]
        if empty:
            raise ValueError(f"family {self.name!r}: parameter {empty[0]!r} has no choices")
        if self.low > self.high:
            raise ValueError(f"family {self.name!r}: band [{self.low}, {self.high}] is empty")
        if (self.play is None) == (self.seat is None or self.player is None):
            raise ValueError(f"family {self.name!r}: give play, or seat and player")
        if self.play is not None and ":" not in self.play:
            raise ValueError(f"family {self.name!r}: play {self.play!r} needs 'module:function'")
        return self

    @property
    def band(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"

    @property
    def size(self) -> int:
        """How many agents the family holds."""
        n = 1
        for choices in self.space.values():
            n *= len(choices)
        return n


class AdversaryJob(BaseModel):
    """What a family's ``play`` function is handed: one point of the space and where to play."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    family: AdversaryFamily
    benchmark: str = Field(description="the benchmark to run (the family's, else the suite's)")
    params: Params
    seed: int
    workdir: Path
    limit: int | None = None
    max_concurrency: int = 8


class Trial(BaseModel):
    """One point the search played."""

    params: Params
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    episodes: int = 0
    phase: Literal["random", "climb"] = "random"
    error: str | None = None


class AdversaryResult(BaseModel):
    """A family's search: the best agent found and the trail that found it."""

    name: str
    group: str = ""
    description: str
    metric: str
    aggregate: Aggregate
    low: float
    high: float
    size: int = Field(description="agents in the family")
    budget: int = Field(description="episodes the search could spend")
    episodes: int = Field(description="episodes it spent")
    best: Trial | None
    passed: bool
    trials: list[Trial] = Field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None


def point_slug(params: Mapping[str, Any]) -> str:
    """A directory name for one point of a space."""
    text = "_".join(f"{k}-{v}" for k, v in sorted(params.items()))
    return re.sub(r"[^A-Za-z0-9_.=-]+", "-", text).strip("-")[:120] or "point"


def headline(summary: Summary, metric: str, aggregate: Aggregate) -> Estimate:
    """``metric`` of ``summary`` (micro or macro); a ``KeyError`` naming it when absent."""
    found = summary.metrics.get(metric)
    if found is None:
        raise KeyError(f"the summary has no metric {metric!r}")
    estimate = found.macro if aggregate == "macro" else found.micro
    if estimate is None:
        raise KeyError(f"{metric} has no {aggregate} average")
    return estimate


def _key(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)


def neighbours(space: Mapping[str, Sequence[Any]], point: Mapping[str, Any]) -> list[Params]:
    """Every point one parameter away: that parameter moved to the choice before or after."""
    out: list[Params] = []
    for name, choices in space.items():
        i = list(choices).index(point[name])
        for j in (i - 1, i + 1):
            if 0 <= j < len(choices):
                out.append({**point, name: choices[j]})
    return out


def random_point(space: Mapping[str, Sequence[Any]], rng: random.Random) -> Params:
    return {name: rng.choice(list(choices)) for name, choices in space.items()}


Evaluate = Callable[[Params], Trial]


def search(
    family: AdversaryFamily,
    evaluate: Evaluate,
    *,
    budget: int,
    seed: int = 0,
    progress: Callable[[Trial], None] | None = None,
) -> list[Trial]:
    """Search ``family.space`` within ``budget`` episodes; every trial played, in order.

    ``evaluate`` plays one point and says how many episodes it took. The first point is always
    played (even when it alone exceeds the budget); the search stops once the budget is spent,
    when every point of the space has been played, or when ``evaluate`` fails on the first
    point (a family that cannot be played at all)."""
    rng = random.Random(f"adversary-search:{family.name}:{seed}")
    space = {k: tuple(v) for k, v in family.space.items()}
    played: dict[str, Trial] = {}
    trials: list[Trial] = []
    spent = 0
    total = family.size

    def score(t: Trial) -> float:
        return -1.0 if t.value is None else t.value

    def play(point: Params, phase: Literal["random", "climb"]) -> Trial | None:
        nonlocal spent
        key = _key(point)
        if key in played:
            return played[key]
        if trials and spent >= budget:
            return None
        trial = evaluate(point).model_copy(update={"phase": phase})
        played[key] = trial
        trials.append(trial)
        spent += trial.episodes
        if progress is not None:
            progress(trial)
        return trial

    # random points: every one when the space is small, else until half the budget is spent
    if total <= 64:
        pool = [
            dict(zip(space, combo, strict=True)) for combo in itertools.product(*space.values())
        ]
        rng.shuffle(pool)
    else:
        pool = [random_point(space, rng) for _ in range(256)]
    for point in pool:
        if trials and spent >= budget / 2:
            break
        if play(point, "random") is None:
            break
        if len(trials) == 1 and trials[0].value is None:
            return trials  # the family cannot be played: say so once, not budget times
    # hill climbing from the best so far; from a fresh random point each time a climb ends
    current: Trial | None = max(trials, key=score)
    while current is not None and spent < budget and len(played) < total:
        options = [o for o in neighbours(space, current.params) if _key(o) not in played]
        rng.shuffle(options)
        moved = False
        for option in options:
            trial = play(option, "climb")
            if trial is None:
                return trials
            if score(trial) > score(current):
                current, moved = trial, True
                break
        if not moved:  # a local best: start again somewhere not played yet
            restart = _unplayed(pool, space, played, rng)
            current = None if restart is None else play(restart, "random")
    return trials


def _unplayed(
    pool: Sequence[Params],
    space: Mapping[str, Sequence[Any]],
    played: Mapping[str, Trial],
    rng: random.Random,
) -> Params | None:
    """A point not played yet: the next of the random pool, else a fresh draw."""
    for point in pool:
        if _key(point) not in played:
            return point
    for _ in range(256):
        point = random_point(space, rng)
        if _key(point) not in played:
            return point
    return None


def best_of(trials: Sequence[Trial]) -> Trial | None:
    """The highest-scoring trial (the first of equals); ``None`` when none scored."""
    scored = [t for t in trials if t.value is not None]
    return max(scored, key=lambda t: t.value or 0.0) if scored else None


def run_family(
    family: AdversaryFamily,
    *,
    benchmark: str,
    seed: int,
    budget: int | None,
    limit: int | None,
    max_concurrency: int,
    workdir: Path,
    progress: Callable[[str], None] | None = None,
    all_tasks: bool = False,
) -> AdversaryResult:
    """Search one family with its ``play`` function and judge the best agent found. Each point
    plays the family's ``tasks`` (capped by ``limit``), or every task with ``all_tasks``."""
    from todeval.core.imports import load_reference
    from todeval.errors import TodevalError

    started = time.monotonic()
    spend = budget if budget is not None else family.budget
    tasks = family.tasks if limit is None else limit
    if family.tasks is not None and limit is not None:
        tasks = min(family.tasks, limit)
    if all_tasks:
        tasks = limit
    base = workdir / point_slug({"family": family.name})

    def evaluate(params: Params) -> Trial:
        function: Callable[[AdversaryJob], Summary] = load_reference(  # type: ignore[assignment]
            family.play or "todeval.validation.play:play_seat", what="adversary play function"
        )
        job = AdversaryJob(
            family=family,
            benchmark=family.benchmark or benchmark,
            params=params,
            seed=seed,
            workdir=base,
            limit=tasks,
            max_concurrency=max_concurrency,
        )
        try:
            summary = function(job)
            est = headline(summary, family.metric, family.aggregate)
        except (TodevalError, KeyError) as exc:
            message = exc.message if isinstance(exc, TodevalError) else str(exc.args[0])
            return Trial(params=params, value=None, episodes=tasks or 1, error=message)
        return Trial(
            params=params,
            value=est.value,
            ci_low=est.ci_low,
            ci_high=est.ci_high,
            n=est.n,
            episodes=max(summary.n_episodes, 1),
        )

    def said(trial: Trial) -> None:
        if progress is not None:
            shown = "error: " + trial.error if trial.error else _value(trial)
            progress(f"{family.name} {describe(trial.params)}: {shown}")

    trials = search(family, evaluate, budget=spend, seed=seed, progress=said)
    best = best_of(trials)
    error = trials[0].error if trials and best is None else None
    passed = best is not None and family.low <= (best.value or 0.0) <= family.high
    return AdversaryResult(
        name=family.name,
        group=family.group,
        description=family.description,
        metric=family.metric,
        aggregate=family.aggregate,
        low=family.low,
        high=family.high,
        size=family.size,
        budget=spend,
        episodes=sum(t.episodes for t in trials),
        best=best,
        passed=passed,
        trials=trials,
        seconds=round(time.monotonic() - started, 3),
        error=error,
    )


def describe(params: Mapping[str, Any]) -> str:
    """``a=1 b=wh`` -- a point, shortly."""
    return " ".join(f"{k}={v}" for k, v in params.items())


def estimate_text(value: float | None, low: float | None, high: float | None) -> str:
    """``0.123 [0.100, 0.150]`` (``-`` without a value; no interval when it has none)."""
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _value(trial: Trial) -> str:
    return estimate_text(trial.value, trial.ci_low, trial.ci_high)


__all__ = [
    "AdversaryFamily",
    "AdversaryJob",
    "AdversaryResult",
    "Trial",
    "best_of",
    "describe",
    "estimate_text",
    "neighbours",
    "point_slug",
    "run_family",
    "search",
]
