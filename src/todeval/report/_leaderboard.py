"""Leaderboard rows: one per run (or corpus-score file), grouped by benchmark.

Rows within a board are sorted by the benchmark's primary metric (micro), best first in the
direction the profile declares (``better``: ascending for a lower-is-better metric, descending
otherwise); the rank intervals and tiers are computed in the same direction. The CI of every
cell travels with it, so every rendering (HTML, CSV, Markdown, LaTeX) can show it.
A run with a privileged player (a control, handed the answer key) is never ranked beside the
agents: its row follows every ranked row, marked as a control and without a rank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np

from todeval.core.records import Estimate, Summary
from todeval.report._inputs import ReportInputs, RunInput, ScoreInput
from todeval.results.profile import BenchmarkProfile as Profile
from todeval.results.profile import Column, Kind
from todeval.runner.naming import slug
from todeval.stats.ranking import rank_intervals, significance_tiers


@dataclass(frozen=True)
class Row:
    key: str
    kind: Literal["run", "score"]
    benchmark: str
    roles: dict[str, str]  # role -> "player (model)"
    selection: str
    task_set: str
    n: int
    cells: dict[str, Estimate | None]
    cost_per_dialogue: float | None = None
    provisional: bool = False
    excluded: int = 0
    protocol: str | None = None
    control: bool = False  # a role was played by a privileged player: shown, never ranked
    task_values: Mapping[str, float] = field(default_factory=dict)  # primary metric, per task

    @property
    def subject(self) -> str:
        """The first role's label (a score file's system name)."""
        return next(iter(self.roles.values()), self.key)


@dataclass
class Board:
    """One leaderboard: the runs (or score files) of one benchmark on one task set."""

    profile: Profile
    kind: Literal["run", "score"]
    task_set: str = ""
    rows: list[Row] = field(default_factory=list)
    suffix: str = ""  # tells apart the ids of one benchmark's boards on several task sets
    rank_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Ranked rows' 95% rank intervals (paired bootstrap over the tasks all of them share)."""
    tiers: dict[str, int] = field(default_factory=dict)
    """Ranked rows' significance tiers (1 = cannot be told apart from the best)."""
    rank_tasks: int = 0
    """The shared tasks the rank intervals and tiers resample."""

    def rank_statistics(self) -> None:
        """Rank intervals and tiers of the ranked rows, over the tasks every one of them
        scored (needs two rows and two shared tasks; rows sorted best first)."""
        ranked = [r for r in self.rows if not r.control and r.task_values]
        if len(ranked) < 2 or len(ranked) != sum(1 for r in self.rows if not r.control):
            return
        common = set(ranked[0].task_values)  # narrowed run by run: no set per run at once
        for r in ranked[1:]:
            common.intersection_update(r.task_values)
        shared = sorted(common)
        if len(shared) < 2:
            return
        # one array, filled row by row (1,000 runs x 1,000 tasks: 8 MB, no float objects)
        values = np.empty((len(ranked), len(shared)), dtype=float)
        for i, r in enumerate(ranked):
            task_values = r.task_values
            values[i] = [task_values[t] for t in shared]
        if self.lower_is_better:  # the statistics rank higher first
            np.negative(values, out=values)
        ranges = rank_intervals(values)
        tiers = significance_tiers(values)
        self.rank_ranges = {r.key: rng for r, rng in zip(ranked, ranges, strict=True)}
        self.tiers = {r.key: tier for r, tier in zip(ranked, tiers, strict=True)}
        self.rank_tasks = len(shared)

    @property
    def lower_is_better(self) -> bool:
        """Whether the board ranks ascending: the profile declares its primary metric lower is
        better (higher is better otherwise, also when it declares none or 'neither')."""
        return self.profile.better_direction(self.profile.primary) == "lower"

    def rank_range(self, row: Row) -> str:
        """``1–3`` (or ``2``): the row's 95% rank interval, '' when none was computed."""
        found = self.rank_ranges.get(row.key)
        if found is None:
            return ""
        return str(found[0]) if found[0] == found[1] else f"{found[0]}–{found[1]}"

    def tier(self, row: Row) -> str:
        found = self.tiers.get(row.key)
        return "" if found is None else str(found)

    @property
    def rank_note(self) -> str:
        """What the rank interval and tier mean ('' when the board has none)."""
        if not self.rank_ranges:
            return ""
        return (
            f"Rank [95%]: the ranks a run takes in 95% of paired bootstrap resamples of the "
            f"{self.rank_tasks} tasks every ranked run scored; tier: runs in order, a run opens "
            "the next tier when the paired 95% interval of its difference to the current tier's "
            "first run excludes 0 (same tier: not told apart from its leader)."
        )

    @property
    def dom_id(self) -> str:
        """``<benchmark>`` or ``<benchmark>-<task set>``: the board's part of element ids."""
        return self.profile.benchmark + (f"-{self.suffix}" if self.suffix else "")

    @property
    def title(self) -> str:
        what = "runs" if self.kind == "run" else "corpus scoring"
        on = f", task set {self.task_set}" if self.task_set and self.task_set != "–" else ""
        return f"{self.profile.display} ({what}{on})"

    @property
    def roles(self) -> list[str]:
        """The roles shown as columns: the profile's, then any other the rows name."""
        names = [r.name for r in self.profile.roles]
        for row in self.rows:
            names += [r for r in row.roles if r not in names]
        return names

    @property
    def full_n(self) -> int:
        return max((r.n for r in self.rows), default=0)

    def size_flag(self, row: Row) -> str | None:
        """``n = 5 of 117`` when a row is over fewer episodes than the board's largest."""
        full = self.full_n
        return f"n = {row.n} of {full}" if row.n < full else None

    @property
    def sizes_differ(self) -> bool:
        return len({r.n for r in self.rows}) > 1

    def rank(self, row: Row) -> str:
        """The row's rank among the ranked rows (controls follow them, unranked: ``ctrl``)."""
        if row.control:
            return CONTROL_RANK
        return str([r.key for r in self.rows if not r.control].index(row.key) + 1)

    @property
    def has_controls(self) -> bool:
        return any(r.control for r in self.rows)


CONTROL_RANK = "ctrl"
CONTROL_NOTE = (
    "ctrl: a control run (a player marked [control] was handed more than its role's view, "
    "e.g. the answer key): shown for reference below the ranked runs, never ranked."
)


def estimate(summary: Summary, column: Column) -> Estimate | None:
    m = summary.metrics.get(column.metric)
    if m is None:
        return None
    return m.micro if column.aggregate == "micro" else m.macro


def _cells(summary: Summary, profile: Profile) -> dict[str, Estimate | None]:
    return {c.key: estimate(summary, c) for c in profile.columns}


def _primary_n(summary: Summary, profile: Profile) -> int:
    m = summary.metrics.get(profile.primary)
    return m.micro.n if m is not None else summary.n_episodes


def run_row(run: RunInput, profile: Profile) -> Row:
    s = run.summary
    return Row(
        key=run.key,
        kind="run",
        benchmark=s.benchmark,
        roles={role: identity.label for role, identity in run.roles.items()},
        selection=run.selection_label,
        task_set=run.task_set,
        n=_primary_n(s, profile),
        cells=_cells(s, profile),
        cost_per_dialogue=s.cost.get("usd_per_episode") if profile.cost else None,
        provisional=run.provisional,
        excluded=sum(s.excluded.values()),
        protocol=run.protocol,
        control=any(identity.privileged for identity in run.roles.values()),
        task_values=run.task_values,
    )


def score_system(score: ScoreInput) -> str:
    """The scored system's name: the prediction file's name without its extensions."""
    if not score.source:
        return score.key
    name = Path(score.source).name
    for ext in (".gz", ".json", ".jsonl"):
        name = name.removesuffix(ext)
    return name or score.key


def score_row(score: ScoreInput, profile: Profile) -> Row:
    s = score.summary
    return Row(
        key=score.key,
        kind="score",
        benchmark=s.benchmark,
        roles={"system": score_system(score)},
        selection="",
        task_set="",
        n=_primary_n(s, profile),
        cells=_cells(s, profile),
    )


def _sort_key(row: Row, profile: Profile) -> tuple[bool, bool, float, str]:
    """Ranked rows before controls, rows with a value before those without, then best first in
    the primary metric's declared direction, then by key."""
    est = row.cells.get(Column(metric=profile.primary, title="").key)
    value = est.value if est is not None else None
    if value is None:
        return (row.control, True, 0.0, row.key)
    lower = profile.better_direction(profile.primary) == "lower"
    return (row.control, False, value if lower else -value, row.key)


def boards(inputs: ReportInputs) -> list[Board]:
    """Run boards (one per benchmark and task set, in order of appearance), then corpus-score
    boards (one per benchmark). Runs over different task sets are never ranked together."""
    out: list[Board] = []
    keyed: dict[tuple[str, str], list[RunInput | ScoreInput]] = {}
    for run in inputs.runs:
        keyed.setdefault((run.summary.benchmark, run.task_set), []).append(run)
    score_keys: dict[tuple[str, str], list[RunInput | ScoreInput]] = {}
    for score in inputs.scores:
        score_keys.setdefault((score.summary.benchmark, ""), []).append(score)
    for kind, groups in (("run", keyed), ("score", score_keys)):
        for (bench, task_set), members in groups.items():
            profile = inputs.profiles.get(bench, [m.summary for m in members])
            board = Board(profile, "run" if kind == "run" else "score", task_set)
            for m in members:
                board.rows.append(
                    run_row(m, profile) if isinstance(m, RunInput) else score_row(m, profile)
                )
            board.rows.sort(key=partial(_sort_key, profile=profile))
            board.rank_statistics()
            out.append(board)
    per_benchmark = Counter((b.profile.benchmark, b.kind) for b in out)
    for b in out:
        if per_benchmark[(b.profile.benchmark, b.kind)] > 1:
            b.suffix = slug(b.task_set)
    return out


def digits(kind: Kind) -> int:
    return 3 if kind == "rate" else 2


def fmt_value(value: float | None, kind: Kind) -> str:
    return "–" if value is None else f"{value:.{digits(kind)}f}"


WILSON_MARK = "W"
WILSON_NOTE = (
    "W: the bootstrap interval collapsed (every task agrees, e.g. 117/117), so the 95% Wilson "
    "score interval is shown instead (with trials, over the effective sample size of the "
    "correlated trials: the tasks when every trial agrees, up to the episodes when trials "
    "vary as much as separate tasks)."
)


def fmt_ci(est: Estimate | None, kind: Kind) -> str:
    """``[low, high]`` (``[low, high]W`` for a Wilson interval where the bootstrap collapsed),
    or an empty string when the estimate has no CI."""
    if est is None:
        return ""
    low, high, wilson = est.shown_interval()
    if low is None or high is None:
        return ""
    d = digits(kind)
    return f"[{low:.{d}f}, {high:.{d}f}]" + (WILSON_MARK if wilson else "")


def any_wilson(boards: Sequence[Board]) -> bool:
    """Whether some cell of these boards shows a Wilson interval."""
    return any(
        e is not None and e.shown_interval()[2]
        for b in boards
        for r in b.rows
        for e in r.cells.values()
    )


def fmt_cell(est: Estimate | None, kind: Kind) -> str:
    value = fmt_value(est.value if est else None, kind)
    ci = fmt_ci(est, kind)
    return f"{value} {ci}" if ci else value


def fmt_usd(value: float | None) -> str:
    if value is None:
        return "–"
    if value == 0:
        return "$0"
    if abs(value) < 0.001:
        return f"${value:.2e}"
    return f"${value:.4f}"
