"""The static sections of the report: leaderboards, figures, taxonomy, usage, manifests.

Everything here is rendered in Python through the escaping builders of :mod:`._markup`; the
page's script only adds the transcript browser and makes rows and marks clickable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from todeval.report._blocks import (
    Numbering,
    est_cell,
    figure,
    head_row,
    note,
    num_cell,
    run_cell,
    table,
    table_caption,
    txt_cell,
)
from todeval.report._inputs import ReportInputs, RunInput
from todeval.report._leaderboard import Board, Row, fmt_usd
from todeval.report._markup import Markup, anchor, el, join, void
from todeval.report._svg import (
    BarSeries,
    ScatterPoint,
    StackRow,
    class_legend,
    cost_scatter,
    error_bar_cell,
    group_bars,
    legend_row,
    stacked_bars,
)
from todeval.results.profile import Column, ProfileBook, is_rate

# --- leaderboard -----------------------------------------------------------------------------


def _axis_range(board: Board, column: Column) -> tuple[float, float]:
    vals = [
        v
        for r in board.rows
        if (e := r.cells.get(column.key)) is not None
        for v in (e.value, e.ci_low, e.ci_high)
        if v is not None
    ]
    if not vals or (min(vals) >= 0 and max(vals) <= 1):
        return 0.0, 1.0
    lo, hi = min(vals), max(vals)
    return (min(lo, 0.0), hi) if hi > lo else (lo - 1, hi + 1)


def _header_rows(board: Board, primary: Column, lo: float, hi: float) -> Markup:
    """Two header rows: identity and single columns span both; a metric with micro and macro
    gets a spanning name over 'micro', '95% CI' (the error bar) and 'macro'."""
    p = board.profile
    runs = board.kind == "run"
    ident = ["#", "Run" if runs else "File", "System"]
    if runs:
        ident += ["User sim.", "Model(s)", "Task set"]
    ident.append("n")
    top = [el("th", {"class": "txt", "rowspan": 2}, h) for h in ident]
    sub: list[Markup] = []
    groups: list[list[Column]] = []
    for c in p.columns:
        if groups and groups[-1][0].metric == c.metric:
            groups[-1].append(c)
        else:
            groups.append([c])
    for group in groups:
        has_bar = any(c.key == primary.key for c in group)
        if len(group) == 1 and not has_bar:
            top.append(el("th", {"class": "num", "rowspan": 2}, group[0].title))
            continue
        span = len(group) + int(has_bar)
        top.append(el("th", {"class": "grp", "colspan": span}, group[0].title))
        for c in group:
            sub.append(el("th", {"class": "num"}, c.aggregate))
            if c.key == primary.key:
                sub.append(el("th", {"class": "eb-h"}, f"95% CI ({lo:g}–{hi:g})"))
    if p.cost:
        top.append(el("th", {"class": "num", "rowspan": 2}, "Cost / dialogue"))
    return join([el("tr", None, *top), el("tr", {"class": "sub"}, *sub)])


def leaderboard_table(board: Board, num: Numbering) -> Markup:
    p = board.profile
    primary = Column(metric=p.primary, title=p.primary_title)
    lo, hi = _axis_range(board, primary)
    runs = board.kind == "run"
    body = []
    for i, row in enumerate(board.rows, start=1):
        href = anchor(run=row.key) if runs else None
        name: list[object] = [el("a", {"href": href}, row.key) if href else row.key]
        if row.provisional:
            name.append(el("span", {"class": "badge live"}, "in progress"))
        if row.excluded:
            name.append(el("span", {"class": "badge"}, f"{row.excluded} excluded"))
        cells = [el("td", {"class": "rank"}, str(i)), el("td", {"class": "txt name"}, *name)]
        cells.append(el("td", {"class": "txt"}, row.system))
        if runs:
            cells += [
                el("td", {"class": "txt"}, row.user),
                el("td", {"class": "txt"}, row.models or "–"),
                el("td", {"class": "txt"}, row.task_set),
            ]
        cells.append(el("td", {"class": "num"}, str(row.n)))
        for c in p.columns:
            cells.append(est_cell(row.cells.get(c.key), c.kind))
            if c.key == primary.key:
                bar = error_bar_cell(row.cells.get(c.key), lo, hi)
                cells.append(el("td", {"class": "eb-c"}, bar))
        if p.cost:
            cells.append(el("td", {"class": "num"}, fmt_usd(row.cost_per_dialogue)))
        attrs = {"data-run": row.key, "data-href": href, "class": "clickable" if runs else None}
        body.append(el("tr", attrs, *cells))
    what = "run" if runs else "scored prediction file"
    caption = table_caption(
        num,
        f"{board.title}: one row per {what}, best first by {p.primary_title.lower()} (micro). "
        "Each cell: value and 95% CI.",
    )
    attrs = {"class": "lb", "id": f"lb-{board.profile.benchmark}-{board.kind}"}
    board_table = table(attrs, caption, _header_rows(board, primary, lo, hi), body)
    return el("div", {"class": "tscroll"}, board_table)


def ci_note(inputs: ReportInputs) -> Markup:
    return note(
        "Micro = mean over episodes; macro = mean of the domain-group means (the clem:todd "
        "aggregate). Abort rate = share of episodes ended by a format violation or the "
        "inner-loop cap. Cost / dialogue = model cost per scored episode (USD; $0 for players "
        "without a model). Click a row to browse its transcripts."
    )


def ci_methods(inputs: ReportInputs) -> Markup:
    """How each benchmark's CIs were computed (from the runs' summaries)."""
    methods: dict[str, set[str]] = {}
    for r in inputs.runs:
        ci = r.summary.ci
        text = f"{ci.method}; {ci.resamples:,} resamples, level {ci.level:g}"
        methods.setdefault(r.summary.benchmark, set()).add(text)
    items = [
        el("li", None, el("b", None, b), ": ", "; ".join(sorted(m))) for b, m in methods.items()
    ]
    return el("ul", {"class": "notes"}, el("li", None, "95% confidence intervals:"), *items)


# --- cost vs accuracy --------------------------------------------------------------------------


def scatter_section(inputs: ReportInputs, board: Board, num: Numbering) -> Markup | None:
    runs = {r.key: r for r in inputs.runs}
    points = []
    for row in board.rows:
        run = runs.get(row.key)
        if run is None:
            continue
        m = run.summary.metrics.get(board.profile.primary)
        points.append(
            ScatterPoint(
                run=row.key,
                system=row.system,
                label=run.model_name("system") or row.key,
                cost=row.cost_per_dialogue,
                est=m.micro if m else None,
            )
        )
    if not points:
        return None
    primary = board.profile.primary
    rate = all(is_rate(runs[r.key].summary, primary) for r in board.rows if r.key in runs)
    fig = cost_scatter(
        f"fig-scatter-{board.profile.benchmark}", points, board.profile.primary_title, rate
    )
    return figure(
        num,
        [fig],
        f"Cost per dialogue against {board.profile.primary_title.lower()} ({board.title}); "
        "vertical bars: 95% CI. Colour and shape: architecture (system); label: model "
        "(the system's name when it has none). Click a point for its transcripts.",
    )


# --- domain groups -----------------------------------------------------------------------------


def groups_section(
    runs: Sequence[RunInput], metric: str, title: str, num: Numbering
) -> Markup | None:
    with_groups = [
        r for r in runs if metric in r.summary.metrics and r.summary.metrics[metric].by_group
    ]
    if not with_groups:
        return None
    groups = sorted({g for r in with_groups for g in r.summary.metrics[metric].by_group})
    series = [
        BarSeries(r.key, r.key, dict(r.summary.metrics[metric].by_group)) for r in with_groups
    ]
    rate = all(is_rate(r.summary, metric) for r in with_groups)
    bench = with_groups[0].summary.benchmark
    fig = group_bars(f"fig-groups-{bench}", groups, series, title, rate)
    kind = "rate" if rate else "number"
    rows = []
    for r in with_groups:
        m = r.summary.metrics[metric]
        cells = [run_cell(r.key)]
        for g in groups:
            est = m.by_group.get(g)
            if est is None:
                cells.append(est_cell(None, kind))
            else:
                href = anchor(run=r.key, group=g)
                cells.append(est_cell(est, kind, href, f"n = {est.n}"))
        cells.append(est_cell(m.macro, kind))
        rows.append(el("tr", None, *cells))
    groups_table = table(
        {"class": "lb compact", "id": f"groups-{bench}"},
        table_caption(
            num, f"{title} per domain group (value, 95% CI, episodes); macro = mean over groups."
        ),
        head_row(["Run", *groups, "macro"]),
        rows,
    )
    legend = legend_row([r.key for r in with_groups])
    return join(
        [
            figure(
                num,
                [legend, fig],
                f"{title} per domain group and run; whiskers: 95% CI (bootstrap over the "
                "group's tasks).",
            ),
            groups_table,
        ]
    )


# --- failure taxonomy --------------------------------------------------------------------------

_CLASS_ORDER = (
    "success",
    "repair",
    "wrong_booking",
    "no_booking",
    "booked_nothing",
    "turn_cap",
    "inner_loop_cap",
    "system_error",
    "user_simulator_failure",
    "infrastructure_error",
    "other",
)


def class_order(values: set[str]) -> list[str]:
    def key(v: str) -> tuple[int, str]:
        if v in _CLASS_ORDER:
            return (_CLASS_ORDER.index(v), v)
        if v.startswith("format_violation"):
            return (_CLASS_ORDER.index("turn_cap"), v)
        return (len(_CLASS_ORDER), v)

    return sorted(values, key=key)


_LABEL_NOTES = {
    "failure_class": "Every episode's failure class: success, wrong booking (all domains booked, "
    "a slot wrong), no booking, turn cap, format violation by kind (aborted), inner-loop cap, "
    "user-simulator failure, infrastructure error.",
    "unrealistic": "Unrealistic task set only: what the system did with the nonsense goal "
    "values. repair = booked a realistic substitute instead of the goal's value; "
    "booked_nothing; other.",
}


def _breakable(name: str) -> list[object]:
    """A class name with a line-break opportunity after ':' (long format-violation kinds)."""
    head, sep, tail = name.partition(":")
    return [head + sep, void("wbr"), tail] if sep else [name]


def taxonomy_section(runs: Sequence[RunInput], num: Numbering) -> Markup:
    names: list[str] = []
    for r in runs:
        names += [n for n in r.summary.labels if n not in names]
    if "failure_class" in names:
        names.remove("failure_class")
        names.insert(0, "failure_class")
    parts: list[Markup] = []
    for name in names:
        members = [r for r in runs if name in r.summary.labels]
        classes = class_order({v for r in members for v in r.summary.labels[name]})
        head = head_row(["Run", "episodes", *[join(_breakable(c)) for c in classes]])
        rows = []
        for r in members:
            counts = r.summary.labels[name]
            total = sum(counts.values())
            cells = [run_cell(r.key), num_cell(str(total))]
            for c in classes:
                k = counts.get(c, 0)
                if not k:
                    cells.append(el("td", {"class": "num zero"}, "0"))
                    continue
                link = el(
                    "a",
                    {"href": anchor(run=r.key, label=f"{name}:{c}"), "class": "cell-link"},
                    el("span", {"class": "v"}, str(k)),
                    el("span", {"class": "ci"}, f"{k / total:.1%}"),
                )
                cells.append(num_cell(link))
            rows.append(el("tr", {"data-run": r.key}, *cells))
        caption = table_caption(
            num,
            f"Label '{name}' per run: episodes (share). ",
            _LABEL_NOTES.get(name, ""),
            " Click a count for those transcripts.",
        )
        attrs = {"class": "lb compact taxonomy", "id": f"tax-{name}"}
        fig = stacked_bars(
            f"fig-tax-{name}",
            name,
            classes,
            [StackRow(r.key, r.summary.labels[name]) for r in members],
        )
        parts += [
            table(attrs, caption, head, rows),
            figure(
                num, [class_legend(classes), fig], f"Share of episodes per '{name}' value and run."
            ),
        ]
    if not parts:
        parts.append(note("No episode labels recorded."))
    return join(parts)


# --- usage -----------------------------------------------------------------------------------


def usage_section(runs: Sequence[RunInput]) -> Markup:
    rows = []
    for r in runs:
        s = r.summary
        for role, u in s.usage.items():
            lat = s.latency.get(role, {})
            est = "~" if u.estimated else ""
            rows.append(
                el(
                    "tr",
                    None,
                    run_cell(r.key),
                    txt_cell(role),
                    num_cell(f"{u.calls:,}"),
                    num_cell(f"{u.cached_calls:,}"),
                    num_cell(f"{u.prompt_tokens:,}{est}"),
                    num_cell(f"{u.completion_tokens:,}{est}"),
                    num_cell(fmt_usd(u.cost_usd)),
                    num_cell(f"{u.flops:.3g}"),
                    num_cell(f"{lat['p50']:.3f}" if lat else "–"),
                    num_cell(f"{lat['p90']:.3f}" if lat else "–"),
                )
            )
    totals = []
    for r in runs:
        c = r.summary.cost
        totals.append(
            el(
                "tr",
                None,
                run_cell(r.key),
                num_cell(fmt_usd(c.get("usd_total"))),
                num_cell(fmt_usd(c.get("usd_per_episode"))),
                num_cell(fmt_usd(c.get("usd_per_success"))),
                num_cell(fmt_usd(c.get("flop_usd_per_episode"))),
                num_cell(f"{c.get('tokens_total') or 0:,.0f}"),
                num_cell(f"{r.summary.timing.get('episode_seconds_total', 0):.1f}"),
            )
        )
    head = [
        "Run",
        "Role",
        "calls",
        "cached",
        "prompt tok.",
        "completion tok.",
        "cost",
        "FLOPs",
        "p50 s",
        "p90 s",
    ]
    parts = []
    if rows:
        caption = el(
            "caption",
            None,
            "Model calls per run and role (~: token counts estimated, the server reported none; "
            "latency percentiles over uncached calls).",
        )
        parts.append(
            table({"class": "lb compact", "id": "usage-table"}, caption, head_row(head, 2), rows)
        )
    else:
        parts.append(note("No model calls in these runs (all players are rule-based)."))
    thead = [
        "Run",
        "cost total",
        "per dialogue",
        "per success",
        "FLOP cost / dialogue",
        "tokens",
        "episode time s",
    ]
    caption = el(
        "caption",
        None,
        "Cost per run (USD; FLOP cost at the package's $/PFLOP price; episode time summed over "
        "episodes).",
    )
    parts.append(
        table({"class": "lb compact", "id": "cost-table"}, caption, head_row(thead), totals)
    )
    return join(parts)


# --- corpus scores ---------------------------------------------------------------------------


def corpus_notes(inputs: ReportInputs) -> Markup:
    items = []
    for s in inputs.scores:
        text = [el("b", None, s.key), f": {s.summary.benchmark}, {s.summary.n_episodes} dialogues"]
        if s.source:
            text.append(f", predictions {s.source}")
        text.append(f"; CI: {s.summary.ci.method} ({s.summary.ci.resamples:,} resamples)")
        if s.scheme and s.scheme != s.summary.ci.method:
            text.append(f"; scheme: {s.scheme}")
        if s.warnings:
            text.append("; warnings: " + "; ".join(s.warnings))
        items.append(el("li", None, *text))
    return el("ul", {"class": "notes"}, *items)


# --- manifests -------------------------------------------------------------------------------


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _kv_table(data: dict[str, Any], cls: str = "kv") -> Markup:
    rows = [
        el("tr", None, el("th", None, k), el("td", None, el("code", None, _value_text(v))))
        for k, v in data.items()
    ]
    return el("table", {"class": cls}, el("tbody", None, *rows))


def manifest_block(run: RunInput) -> Markup:
    m = run.manifest
    head = f"{run.key} — {m.benchmark}, {run.system} vs {run.user_label}"
    info = {
        "path": str(run.path),
        "config_hash": m.config_hash,
        "task_set_hash": m.task_set_hash,
        "n_tasks": m.n_tasks,
        "seed": m.seed,
        "package_version": m.package_version,
        "git_commit": m.git_commit or "–",
        "episodes on disk": len(run.episodes),
        "summary": "computed by the report (run in progress or no summary.json)"
        if run.provisional
        else "summary.json",
        "CI": f"{run.summary.ci.method}, level {run.summary.ci.level}, "
        f"{run.summary.ci.resamples} resamples, seed {run.summary.ci.seed}",
    }
    sessions = [
        el(
            "tr",
            None,
            el("td", None, s.started_at),
            el("td", None, s.ended_at or "running"),
            el("td", None, s.host),
            el("td", {"class": "num"}, str(s.episodes_run)),
            el("td", None, s.executor),
            el("td", None, el("code", None, "todeval " + " ".join(s.command))),
        )
        for s in m.sessions
    ]
    models = m.players.get("models") or {}
    players = {k: v for k, v in m.players.items() if k != "models"}
    return el(
        "details",
        {"id": f"manifest-{run.key}", "class": "manifest"},
        el("summary", None, head),
        el(
            "div",
            {"class": "mgrid"},
            el(
                "div",
                None,
                el("h4", None, "Run"),
                _kv_table(info),
                el("h4", None, "Players"),
                _kv_table(players),
                *([el("h4", None, "Models"), _kv_table(models)] if models else []),
            ),
            el("div", None, el("h4", None, "Config"), _kv_table(m.config)),
        ),
        el("h4", None, "Sessions"),
        el(
            "table",
            {"class": "kv sessions"},
            el(
                "thead",
                None,
                el(
                    "tr",
                    None,
                    *[
                        el("th", None, h)
                        for h in ("started", "ended", "host", "episodes", "executor", "command")
                    ],
                ),
            ),
            el("tbody", None, *sessions),
        ),
    )


def benchmark_runs(inputs: ReportInputs, benchmark: str) -> list[RunInput]:
    return [r for r in inputs.runs if r.summary.benchmark == benchmark]


def primary_of(benchmark: str, runs: Sequence[RunInput], profiles: ProfileBook) -> tuple[str, str]:
    p = profiles.get(benchmark, [r.summary for r in runs])
    return p.primary, p.primary_title


def row_by_key(board: Board) -> dict[str, Row]:
    return {r.key: r for r in board.rows}
