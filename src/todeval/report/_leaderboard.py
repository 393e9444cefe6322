"""Leaderboard rows: one per run (or corpus-score file), grouped by benchmark.

Rows within a board are sorted by the benchmark's primary metric (micro), best first; the CI
of every cell travels with it, so every rendering (HTML, CSV, Markdown, LaTeX) can show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

from todeval.core.records import Estimate, Summary
from todeval.report._inputs import ReportInputs, RunInput, ScoreInput
from todeval.results.profile import BenchmarkProfile as Profile
from todeval.results.profile import Column, Kind


@dataclass(frozen=True)
class Row:
    key: str
    kind: Literal["run", "score"]
    benchmark: str
    system: str
    user: str
    models: str
    task_set: str
    n: int
    cells: dict[str, Estimate | None]
    cost_per_dialogue: float | None = None
    provisional: bool = False
    excluded: int = 0


@dataclass
class Board:
    profile: Profile
    kind: Literal["run", "score"]
    rows: list[Row] = field(default_factory=list)

    @property
    def title(self) -> str:
        what = "runs" if self.kind == "run" else "corpus scoring"
        return f"{self.profile.benchmark} ({what})"


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
        system=run.system,
        user=run.user_label,
        models=run.models,
        task_set=run.task_set,
        n=_primary_n(s, profile),
        cells=_cells(s, profile),
        cost_per_dialogue=s.cost.get("usd_per_episode") if profile.cost else None,
        provisional=run.provisional,
        excluded=sum(s.excluded.values()),
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
        system=score_system(score),
        user="",
        models="",
        task_set="",
        n=_primary_n(s, profile),
        cells=_cells(s, profile),
    )


def _sort_key(row: Row, profile: Profile) -> tuple[float, str]:
    est = row.cells.get(Column(metric=profile.primary, title="").key)
    value = est.value if est is not None and est.value is not None else float("-inf")
    return (-value, row.key)


def boards(inputs: ReportInputs) -> list[Board]:
    """Run boards (one per benchmark, in order of appearance), then corpus-score boards."""
    out: list[Board] = []
    for kind, items in (("run", inputs.runs), ("score", inputs.scores)):
        by_bench: dict[str, list[RunInput | ScoreInput]] = {}
        for item in items:
            by_bench.setdefault(item.summary.benchmark, []).append(item)
        for bench, members in by_bench.items():
            profile = inputs.profiles.get(bench, [m.summary for m in members])
            board = Board(profile, "run" if kind == "run" else "score")
            for m in members:
                board.rows.append(
                    run_row(m, profile) if isinstance(m, RunInput) else score_row(m, profile)
                )
            board.rows.sort(key=partial(_sort_key, profile=profile))
            out.append(board)
    return out


def digits(kind: Kind) -> int:
    return 3 if kind == "rate" else 2


def fmt_value(value: float | None, kind: Kind) -> str:
    return "–" if value is None else f"{value:.{digits(kind)}f}"


def fmt_ci(est: Estimate | None, kind: Kind) -> str:
    """``[low, high]``, or an empty string when the estimate has no CI."""
    if est is None or est.ci_low is None or est.ci_high is None:
        return ""
    d = digits(kind)
    return f"[{est.ci_low:.{d}f}, {est.ci_high:.{d}f}]"


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
