"""The :class:`Comparison` record written by ``todeval compare -o OUT.json``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from todeval.results.profile import Better
from todeval.stats.proportions import McNemar

COMPARISON_SCHEMA_VERSION = 2
"""2: the primary metric first, directions, verdicts, p-value floors, detectable differences,
figures recorded by one run only (1 is read: the new fields default to unknown)."""

Outcome = Literal["better", "worse", "higher", "lower", "no_difference"]


class RunInfo(BaseModel):
    """One compared run."""

    label: str = Field(description="the run directory's name (its path if names collide)")
    path: str
    benchmark: str
    task_set: str | None
    roles: dict[str, str] = Field(
        default_factory=dict, description="role -> who played it: player (model)"
    )
    role_config_keys: list[str] = Field(
        default_factory=list, description="the config keys the roles' choices set"
    )
    selection: str = Field("", description="which tasks, in a few words: test, 20 stratified")
    protocol: str | None = Field(None, description="the rule set (none recorded by 0.1.0)")
    config_hash: str
    task_set_hash: str
    n_tasks: int = Field(description="tasks with at least one scored episode")
    n_episodes: int = Field(description="scored episodes (infrastructure errors left out)")
    n_excluded: int = Field(description="episodes left out of every metric")
    max_trials: int = Field(description="most scored episodes of any one task")


class MetricComparison(BaseModel):
    """One metric, run B against the baseline A, over the tasks both runs scored."""

    metric: str
    title: str | None = Field(None, description="the profile's name for it (its column's title)")
    primary: bool = Field(False, description="the benchmark's primary metric (its profile's)")
    better: Better | None = Field(
        None, description="which way is better, as the benchmark's profile declares (null: none)"
    )
    n_tasks: int = Field(description="paired tasks (the resampling unit)")
    mean_a: float = Field(description="baseline: mean over paired tasks of the task means")
    mean_b: float
    diff: float = Field(description="mean_b - mean_a")
    ci_low: float = Field(description="paired percentile bootstrap, resampling tasks")
    ci_high: float
    p_value: float = Field(description="two-sided bootstrap p (percentile-interval inversion)")
    p_at_floor: bool = Field(
        False,
        description="p_value is the bootstrap's floor 2 / (resamples + 1): the true p is at most "
        "this",
    )
    p_adjusted: float | None = Field(
        None,
        description="p_value adjusted for every test of this comparison (method.adjustment); "
        "null in files written before the adjustment existed",
    )
    p_adjusted_bound: bool = Field(
        False,
        description="p_adjusted is an upper bound: it comes from a p at the bootstrap's floor",
    )
    significant: bool = Field(
        False, description="p_adjusted (or p_value with no adjustment) below method.alpha"
    )
    detectable: float | None = Field(
        None,
        description="the smallest difference this paired comparison detects with method.power "
        "at the adjusted level method.alpha_adjusted, from the spread of the task differences "
        "(null: nothing to measure)",
    )
    binary: bool = Field(description="every episode value in both runs is 0 or 1")
    mcnemar: McNemar | None = Field(
        None, description="exact McNemar test (binary metrics with one trial per task)"
    )


class Ratio(BaseModel):
    """A cost or latency figure of B over A, from the runs' summaries (no CI)."""

    name: str
    a: float | None = Field(description="null: run A recorded no such figure")
    b: float | None = Field(description="null: run B recorded no such figure")
    ratio: float | None = Field(description="b / a; null when a is 0 or either is missing")


class Verdict(BaseModel):
    """What the comparison decides for one run against the baseline, on the primary metric."""

    metric: str
    title: str
    better: Better | None = Field(description="the metric's declared direction")
    outcome: Outcome = Field(
        description="better / worse (a declared direction), higher / lower (none declared), "
        "no_difference (not significant after the adjustment)"
    )
    diff: float = Field(description="B - A")
    ci_low: float
    ci_high: float
    p_adjusted: float
    p_adjusted_bound: bool = Field(description="p_adjusted is an upper bound (bootstrap floor)")
    detectable: float | None = Field(
        description="the smallest difference detectable at this size (see MetricComparison)"
    )
    text: str = Field(description="the verdict line as printed")


class PairComparison(BaseModel):
    """Run B against the baseline A."""

    baseline: str
    run: str
    shared_tasks: int = Field(description="tasks scored in both runs")
    dropped_baseline_only: int = Field(description="tasks only the baseline scored (left out)")
    dropped_run_only: int = Field(description="tasks only run B scored (left out)")
    selection_diff: list[str] = Field(
        default_factory=list,
        description="how the selections differ (compared with --shared-tasks), e.g. "
        "selection.limit: 20 vs 30",
    )
    config_diff: dict[str, list[Any]] = Field(
        default_factory=dict, description="config keys that differ: [baseline value, B value]"
    )
    metrics: list[MetricComparison] = Field(default_factory=list)
    ratios: list[Ratio] = Field(
        default_factory=list, description="from summary.json of each run (whole runs)"
    )
    notes: list[str] = Field(default_factory=list)
    verdict: Verdict | None = Field(
        None, description="on the primary metric (null: it is not among the compared metrics)"
    )


class ComparisonMethod(BaseModel):
    pairing: str = "task (with several trials, the task's mean)"
    ci: str = "paired percentile bootstrap over shared tasks (same draws for both runs)"
    p_value: str = (
        "two-sided, inverting the percentile bootstrap: 2 (min(#<0, #>0) + ties/2 + 1) / (R + 1)"
    )
    mcnemar: str = "exact: binomial test of b against b + c at 1/2, two-sided"
    adjustment: str = Field(
        "holm",
        description="how p_adjusted corrects for multiplicity: holm (family-wise error), bh "
        "(Benjamini-Hochberg false discovery rate) or none",
    )
    family: int = Field(0, description="the tests adjusted together: every run x metric")
    alpha: float = Field(0.05, description="significance level of the verdicts: 1 - level")
    alpha_adjusted: float = Field(
        0.05,
        description="the level the detectable differences are computed at: alpha / family for "
        "holm and bh (the strictest step, what one real difference among null ones must pass), "
        "alpha for none",
    )
    power: float = Field(0.8, description="power of the detectable differences")
    detectable: str = (
        "paired z-test on the task differences (their sd), at alpha_adjusted and power; for 0/1 "
        "metrics at least k^2 / (n + k^2), the spread a shift of that size needs"
    )
    primary: str | None = Field(None, description="the metric the verdicts are on")
    level: float = 0.95
    resamples: int = 2000
    seed: int = 0


class Comparison(BaseModel):
    """``todeval compare`` output: every run against the first (the baseline)."""

    schema_version: int = COMPARISON_SCHEMA_VERSION
    benchmark: str
    task_set: str | None
    baseline: str = Field(description="label of the baseline run")
    runs: list[RunInfo]
    method: ComparisonMethod
    pairs: list[PairComparison]
