"""Which columns a leaderboard shows for each benchmark.

A profile names the benchmark's primary metric (the y axis of the cost scatter, the metric of
the domain-group bars and simulator panels) and its leaderboard columns. Benchmarks without a
profile get a generic one built from the metrics their summary holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from todeval.core.records import Summary

Aggregate = Literal["micro", "macro"]
Kind = Literal["rate", "score", "number"]


@dataclass(frozen=True)
class Column:
    """One metric column: a metric, micro or macro, shown with its 95% CI."""

    metric: str
    aggregate: Aggregate
    title: str
    kind: Kind = "rate"

    @property
    def key(self) -> str:
        return f"{self.metric}:{self.aggregate}"

    @property
    def heading(self) -> str:
        """The column's name in a flat table header (e.g. ``Inform (macro)``)."""
        return self.title + (" (macro)" if self.aggregate == "macro" else "")


@dataclass(frozen=True)
class Profile:
    benchmark: str
    primary: str
    primary_title: str
    columns: tuple[Column, ...]
    success_metric: str | None = None
    cost: bool = True


def _booking() -> Profile:
    acc, inf = "booking.booking_accuracy", "booking.inform"
    return Profile(
        benchmark="booking",
        primary=acc,
        primary_title="Booking accuracy",
        columns=(
            Column(acc, "micro", "Booking acc."),
            Column(acc, "macro", "Booking acc."),
            Column(inf, "micro", "Inform"),
            Column(inf, "macro", "Inform"),
            Column("booking.attributes", "micro", "Attributes"),
            Column("booking.aborted", "micro", "Abort rate"),
            Column("booking.turns", "micro", "Turns", "number"),
        ),
        success_metric=acc,
    )


_MWZ = (("inform", "Inform"), ("success", "Success"), ("bleu", "BLEU"), ("combined", "Combined"))
_INCAR = (("match", "Match"), ("succ_f1", "SuccF1"), ("bleu", "BLEU"), ("combined", "Combined"))


def _corpus(benchmark: str, prefix: str, names: tuple[tuple[str, str], ...], run: bool) -> Profile:
    """Corpus metrics (0-100 scale) ranked by Combined; generation runs also show format
    failures and cost."""
    columns = tuple(Column(f"{prefix}.{m}", "micro", t, "score") for m, t in names)
    if run:
        columns += (Column(f"{prefix}.format_failure_rate", "micro", "Format failures %", "score"),)
    combined = f"{prefix}.combined"
    return Profile(
        benchmark=benchmark,
        primary=combined,
        primary_title="Combined",
        columns=columns,
        cost=run,
    )


_PROFILES: dict[str, Profile] = {
    "booking": _booking(),
    "multiwoz": _corpus("multiwoz", "multiwoz", _MWZ, run=False),
    "incar": _corpus("incar", "incar", _INCAR, run=False),
    "multiwoz-turns": _corpus("multiwoz-turns", "multiwoz", _MWZ, run=True),
    "incar-turns": _corpus("incar-turns", "incar", _INCAR, run=True),
}

GENERIC_COLUMNS = 6


def profile_for(benchmark: str, summaries: list[Summary] | None = None) -> Profile:
    """The benchmark's profile, or a generic one: the first metrics its summaries hold."""
    if benchmark in _PROFILES:
        return _PROFILES[benchmark]
    names = sorted({m for s in summaries or [] for m in s.metrics})[:GENERIC_COLUMNS]
    columns = tuple(
        Column(m, "micro", m.split(".", 1)[-1].replace("_", " "), "number") for m in names
    )
    primary = columns[0].metric if columns else ""
    return Profile(
        benchmark=benchmark,
        primary=primary,
        primary_title=columns[0].title if columns else "",
        columns=columns,
    )


def is_rate(summary: Summary, metric: str) -> bool:
    """Whether a metric's values and CIs all lie in [0, 1] (a rate, plotted on a 0-1 axis)."""
    m = summary.metrics.get(metric)
    if m is None:
        return False
    ests = [m.micro, *([m.macro] if m.macro else []), *m.by_group.values()]
    vals = [v for e in ests for v in (e.value, e.ci_low, e.ci_high) if v is not None]
    return all(0.0 <= v <= 1.0 for v in vals)
