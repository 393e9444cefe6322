"""Benchmark profiles: how a benchmark's results are shown, registered by the benchmark.

The report, ``compare``, the exports and ``todeval view`` read a :class:`BenchmarkProfile`
instead of knowing any benchmark: leaderboard columns and the primary metric, its failure
labels (order, notes, colours), the name of its task groups, the display names of its roles,
how each event kind renders in a transcript (sent to the page as data), which detail fields to
show, and whether simulator panels apply. A benchmark registers its profile in its plug-in::

    def register(registry):
        registry.profile("mybench.profile:PROFILE", benchmark="mybench")  # imported on use

    # mybench/profile.py
    PROFILE = BenchmarkProfile(benchmark="mybench", primary="mybench.success", ...)

(a benchmark registered by its spec alone, like the toy, shows its spec's ``profile``).

A benchmark without a profile gets :func:`generic_profile`: the first metrics its summaries hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from todeval.core.records import Summary

Aggregate = Literal["micro", "macro"]
Kind = Literal["rate", "score", "number"]
EventStyle = Literal["message", "call", "result", "good", "bad", "alert", "end", "note"]
DetailLayout = Literal["sections", "kv", "list", "rows", "json"]
Better = Literal["higher", "lower", "neither"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Column(_Frozen):
    """One leaderboard column: a metric, micro or macro, shown with its 95% CI."""

    metric: str
    aggregate: Aggregate = "micro"
    title: str
    kind: Kind = Field("rate", description="rate: 0-1, 3 decimals; score: 0-100; number")

    @property
    def key(self) -> str:
        return f"{self.metric}:{self.aggregate}"

    @property
    def heading(self) -> str:
        """The column's name in a flat table header (e.g. ``Inform (macro)``)."""
        return self.title + (" (macro)" if self.aggregate == "macro" else "")


class LabelValue(_Frozen):
    """One value of an episode label (e.g. ``ending = turn_cap``)."""

    value: str = Field(description="the value, or a prefix when `prefix` is set")
    title: str | None = None
    colour: str | None = Field(None, description="CSS colour of its bars and chips")
    note: str = ""
    prefix: bool = Field(False, description="matches every value starting with `value`")

    def matches(self, value: str) -> bool:
        return value.startswith(self.value) if self.prefix else value == self.value


class LabelSpec(_Frozen):
    """An episode label the benchmark writes: its values in display order, with notes."""

    name: str
    title: str | None = None
    note: str = ""
    values: tuple[LabelValue, ...] = ()
    failure: bool = Field(False, description="the label that classifies failures (shown first)")

    def order(self, seen: Iterable[str]) -> list[str]:
        """``seen`` in the declared order (unknown values after, by name)."""

        def key(value: str) -> tuple[int, str]:
            for i, spec in enumerate(self.values):
                if spec.matches(value):
                    return (i, value)
            return (len(self.values), value)

        return sorted(set(seen), key=key)

    def value(self, value: str) -> LabelValue | None:
        return next((v for v in self.values if v.matches(value)), None)


class RoleView(_Frozen):
    """A role's display name (``system`` -> ``System``, ``user`` -> ``User sim.``)."""

    name: str
    title: str


class EventView(_Frozen):
    """How one event kind renders in a transcript, as data for the page's script.

    Templates (``code``, ``suffix``) name data fields in braces: ``lookup_{table}``.
    """

    style: EventStyle = "note"
    title: str = Field(description="the event's label, or the speaker of a message")
    text: str | None = Field(None, description="data field shown as the main text")
    code: str | None = Field(None, description="template shown as code (e.g. a tool name)")
    args: str | None = Field(None, description="data field (an object) shown as 'key: value'")
    rows: str | None = Field(None, description="data field (a list of objects) shown as a table")
    pre: str | None = Field(None, description="data field shown preformatted")
    suffix: str | None = Field(None, description="template appended to the text")
    flag: str | None = Field(None, description="data field: truthy -> style good, else bad")
    flag_false_title: str | None = Field(None, description="the title when `flag` is falsy")
    bold: str | None = Field(None, description="data field shown in bold before the text")


def episode_log_events(violation_title: str) -> dict[str, EventView]:
    """Views of the two kinds every :class:`todeval.dialogue.EpisodeLog` writes: a violation
    (reason and the raw output, titled as the benchmark calls it) and the episode's end."""
    return {
        "violation": EventView(style="alert", title=violation_title, text="reason", pre="raw"),
        "episode_end": EventView(style="end", title="end", bold="outcome", text="reason"),
    }


class DetailView(_Frozen):
    """One field of an episode's ``details`` shown as a box beside the transcript."""

    key: str
    title: str
    layout: DetailLayout = Field(
        "json",
        description="sections: one box per entry of an object; kv; list; rows: a list of "
        "objects as a table; json",
    )
    fields: Mapping[str, str] = Field(
        default_factory=dict,
        description="display titles of an entry's fields (shown first, in this order), e.g. "
        "info -> 'booked row'; an empty title hides the field; others keep their names",
    )
    item: str | None = Field(
        None, description="list layout: template of one item's line, e.g. 'turn {turn}: {reason}'"
    )
    pre: tuple[str, ...] = Field((), description="fields shown preformatted (raw model output)")


class PanelRoles(_Frozen):
    """Panels apply: players of ``subject`` are scored against several ``varied`` ones."""

    subject: str = Field(description="the role under test, e.g. system")
    varied: str = Field(description="the role whose players vary, e.g. user (simulators)")
    subject_noun: str | None = Field(
        None, description="a subject player in running text (default: the role's title)"
    )
    varied_noun: str | None = Field(
        None, description="a varied player in running text, e.g. user simulator"
    )
    subject_plural: str | None = Field(None, description="default: the noun + 's'")
    varied_plural: str | None = Field(None, description="default: the noun + 's'")


class BenchmarkProfile(_Frozen):
    """Everything the report needs to know to show a benchmark's results."""

    benchmark: str
    title: str | None = None
    primary: str = Field(description="the metric boards are ranked by (micro)")
    primary_title: str
    columns: tuple[Column, ...]
    success_metric: str | None = Field(None, description="binary metric for pass^k and $/success")
    cost: bool = Field(True, description="show cost columns and the cost scatter")
    group_noun: str = Field("group", description="what a task group is called")
    macro_over: str | None = Field(
        None,
        description="what a metric's macro average is a mean over, when not over the task "
        "groups (e.g. 'label': label-macro F1); the report names it beside per-group tables",
    )
    roles: tuple[RoleView, ...] = ()
    labels: tuple[LabelSpec, ...] = ()
    events: Mapping[str, EventView] = Field(default_factory=dict)
    details: tuple[DetailView, ...] = ()
    panel: PanelRoles | None = None
    reviewer: str | None = Field(
        None,
        description="'module:attribute' of the benchmark's todeval.review.Reviewer: who failed "
        "(todeval review, the report's Who failed section, panels' simulator fault rates)",
    )
    explainer: str | None = Field(
        None,
        description="'module:attribute' of a function from an EpisodeRecord to a "
        "todeval.report.explain.ScoreExplanation: how the episode's score was computed, read "
        "from its details (the episode page); without one the page lists metrics and details",
    )
    notes: tuple[str, ...] = Field((), description="what the leaderboard's columns mean")
    better: Mapping[str, Better] = Field(
        default_factory=dict,
        description="which way each metric is better (compare's verdicts and tables): higher, "
        "lower, or neither (a figure to read, not to win on); a key covers the metric of its "
        "name and every metric under it (mybench.success covers mybench.success.depth1)",
    )

    @field_validator("events")
    @classmethod
    def _episode_log_kinds(cls, events: Mapping[str, EventView]) -> Mapping[str, EventView]:
        """The two kinds every EpisodeLog writes are shown even when a profile omits them."""
        return {**episode_log_events("violation"), **events}

    @property
    def display(self) -> str:
        return self.title or self.benchmark

    def role_title(self, role: str) -> str:
        return next((r.title for r in self.roles if r.name == role), role.replace("_", " "))

    def label(self, name: str) -> LabelSpec | None:
        return next((spec for spec in self.labels if spec.name == name), None)

    def failure_label(self) -> str | None:
        return next((spec.name for spec in self.labels if spec.failure), None)

    def better_direction(self, metric: str) -> Better | None:
        """Which way ``metric`` is better, from the nearest declared key (the metric itself,
        then each dotted prefix: ``a.b.c``, ``a.b``, ``a``); None when none is declared."""
        name = metric
        while name:
            if name in self.better:
                return self.better[name]
            name = name.rpartition(".")[0]
        return None

    def metric_title(self, metric: str) -> str:
        """The metric's display name: the primary's title, a micro column's title, or the
        metric's own name."""
        if metric == self.primary and self.primary_title:
            return self.primary_title
        titles = [c.title for c in self.columns if c.metric == metric]
        return titles[0] if titles else metric


GENERIC_COLUMNS = 6


def generic_profile(benchmark: str, summaries: Iterable[Summary] = ()) -> BenchmarkProfile:
    """A profile for a benchmark that registered none: its first metrics, as numbers."""
    names = sorted({m for s in summaries for m in s.metrics})[:GENERIC_COLUMNS]
    columns = tuple(
        Column(metric=m, title=m.split(".", 1)[-1].replace("_", " "), kind="number") for m in names
    )
    return BenchmarkProfile(
        benchmark=benchmark,
        primary=columns[0].metric if columns else "",
        primary_title=columns[0].title if columns else "",
        columns=columns,
    )


class ProfileBook:
    """The registered profiles, looked up by benchmark name (a generic one for the others)."""

    def __init__(self, profiles: Mapping[str, BenchmarkProfile] | None = None) -> None:
        self._profiles = dict(profiles or {})

    def get(self, benchmark: str, summaries: Iterable[Summary] = ()) -> BenchmarkProfile:
        found = self._profiles.get(benchmark)
        return found if found is not None else generic_profile(benchmark, summaries)

    def __contains__(self, benchmark: object) -> bool:
        return benchmark in self._profiles


def is_rate(summary: Summary, metric: str) -> bool:
    """Whether a metric's values and CIs all lie in [0, 1] (a rate, plotted on a 0-1 axis)."""
    m = summary.metrics.get(metric)
    if m is None:
        return False
    ests = [m.micro, *([m.macro] if m.macro else []), *m.by_group.values()]
    vals = [v for e in ests for v in (e.value, e.ci_low, e.ci_high) if v is not None]
    return all(0.0 <= v <= 1.0 for v in vals)
