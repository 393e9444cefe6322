"""How an episode's score was computed, for the episode page: a hook a benchmark registers.

The report names no benchmark, so it cannot know that an episode scores 0 because one of the
things its scorer checked went wrong. A benchmark that can say so registers an *explainer* in its
profile (``BenchmarkProfile.explainer``, a ``module:attribute`` reference): a function from
an :class:`~todeval.core.records.EpisodeRecord` to a :class:`ScoreExplanation`, read from the
record's ``details`` -- what the scorer wrote, never scored again::

    def explain(record: EpisodeRecord) -> ScoreExplanation | None:
        return ScoreExplanation(
            metric="mybench.success",
            summary="0: the answer was not given",
            groups=[ScoreGroup(title="answer", checks=[ScoreCheck(name="city", passed=False,
                                                                   expected="Paris", actual="")])],
        )

    PROFILE = BenchmarkProfile(..., explainer="mybench.explain:explain")

The page shows it beside the episode's metrics; without an explainer (or when it returns
``None``) the page lists the record's metrics and details as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.core.imports import load_reference
from todeval.core.records import EpisodeRecord
from todeval.errors import TodevalError


class ScoreCheck(BaseModel):
    """One thing the scorer checked (a slot of a goal, an attribute, a constraint)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    passed: bool | None = Field(None, description="None: not checked, or not applicable")
    expected: str = ""
    actual: str = ""
    note: str = Field("", description="the scorer's own words, e.g. its mismatch line")


class ScoreGroup(BaseModel):
    """Checks that count together (e.g. one part of a goal)."""

    model_config = ConfigDict(extra="forbid")

    title: str
    passed: bool | None = None
    note: str = ""
    checks: list[ScoreCheck] = Field(default_factory=list)


class ScoreExplanation(BaseModel):
    """An episode's score and how it was computed."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field("", description="the metric explained (usually the primary)")
    summary: str = Field(description="one line: the value and why")
    groups: list[ScoreGroup] = Field(default_factory=list)


Explainer = Callable[[EpisodeRecord], ScoreExplanation | None]


def load_explainer(reference: str | None) -> Explainer | None:
    """The function a profile's ``explainer`` names; ``None`` without one or when it cannot be
    loaded (the page then shows the generic view: a report never fails over an explanation)."""
    if not reference:
        return None
    try:
        found = load_reference(reference, what="score explainer")
    except TodevalError:
        return None
    return found if callable(found) else None


def explanation(explainer: Explainer | None, record: EpisodeRecord) -> dict[str, Any] | None:
    """The explanation as the page receives it, or ``None`` (no explainer, nothing to say,
    or details it cannot read).

    It is embedded once per transcript in a static report, so each check is written as a
    list, ``[name, passed, expected, actual]`` plus ``note`` when there is one, and a group's
    or the explanation's empty fields are left out (about half the size of the objects)."""
    if explainer is None:
        return None
    try:
        found = explainer(record)
        if found is None:
            return None
        checked = ScoreExplanation.model_validate(found, from_attributes=True)
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError):
        return None
    groups = []
    for group in checked.groups:
        out: dict[str, Any] = group.model_dump(exclude_defaults=True, exclude={"checks"})
        out["checks"] = [
            [c.name, c.passed, c.expected, c.actual, *([c.note] if c.note else [])]
            for c in group.checks
        ]
        groups.append(out)
    data = checked.model_dump(exclude_defaults=True, exclude={"groups"})
    return {**data, "groups": groups} if groups else data


__all__ = [
    "Explainer",
    "ScoreCheck",
    "ScoreExplanation",
    "ScoreGroup",
    "explanation",
    "load_explainer",
]
