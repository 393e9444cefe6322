"""Prediction-powered inference (PPI) of a mean: an LLM judge on every item, people on a few.

A judge labels all ``N + n`` items cheaply but with a bias; people label ``n`` of them. The
judge-only mean is precise and wrong by the judge's bias; the people-only mean is right and
imprecise. PPI (Angelopoulos et al., Science 2023) keeps the judge's precision and removes its
bias with the people's labels:

    theta = mean(f over the N items people did not label) + mean(y - f over the n they did)

with variance ``var(f) / N + var(y - f) / n`` and a normal 95% interval. It is never worse
than the people-only interval by much and much narrower when the judge tracks the people.
``tests/stats/test_ppi.py`` checks its coverage on simulated data with a biased judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt
from statistics import NormalDist

from pydantic import BaseModel, Field


class Interval(BaseModel):
    value: float
    ci_low: float
    ci_high: float
    n: int


class PPIEstimate(BaseModel):
    """The judge-only, people-only and prediction-powered estimates of one mean."""

    judge_only: Interval = Field(description="mean of the judge over every item (biased)")
    people_only: Interval = Field(description="mean of the people's labels (the n items)")
    ppi: Interval = Field(description="prediction-powered: judge on all, corrected by people")
    judge_bias: float = Field(description="mean of judge - people on the labelled items")
    level: float = 0.95


def _normal(values: Sequence[float], level: float) -> Interval:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    half = NormalDist().inv_cdf(0.5 + level / 2) * sqrt(var / n)
    return Interval(value=mean, ci_low=mean - half, ci_high=mean + half, n=n)


def _variance(values: Sequence[float]) -> float:
    n = len(values)
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0


def ppi_mean(
    judge_unlabelled: Sequence[float],
    judge_labelled: Sequence[float],
    people: Sequence[float],
    *,
    level: float = 0.95,
) -> PPIEstimate:
    """PPI of the people's mean: ``judge_unlabelled`` the judge's values on items people did
    not label, ``judge_labelled[i]`` and ``people[i]`` the judge's and the people's value on
    the i-th labelled item."""
    if len(judge_labelled) != len(people):
        raise ValueError("the judge's and the people's labelled values must pair up")
    if len(people) < 2 or len(judge_unlabelled) < 2:
        raise ValueError("PPI needs at least two labelled and two unlabelled items")
    residual = [y - f for f, y in zip(judge_labelled, people, strict=True)]
    unlabelled_mean = sum(judge_unlabelled) / len(judge_unlabelled)
    correction = sum(residual) / len(residual)
    value = unlabelled_mean + correction
    var = _variance(judge_unlabelled) / len(judge_unlabelled) + _variance(residual) / len(residual)
    half = NormalDist().inv_cdf(0.5 + level / 2) * sqrt(var)
    every = [*judge_unlabelled, *judge_labelled]
    return PPIEstimate(
        judge_only=_normal(every, level),
        people_only=_normal(people, level),
        ppi=Interval(value=value, ci_low=value - half, ci_high=value + half, n=len(every)),
        judge_bias=-correction,
        level=level,
    )


__all__ = ["Interval", "PPIEstimate", "ppi_mean"]
