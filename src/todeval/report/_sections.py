"""The static sections of the report: leaderboards, figures, taxonomy, usage, manifests.

Everything here is rendered in Python through the escaping builders of :mod:`.markup`; the
page's script only adds the transcript browser and makes rows and marks clickable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from todeval.core.records import Estimate
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
from todeval.report._leaderboard import (
    CONTROL_NOTE,
    WILSON_NOTE,
    Board,
    Row,
    any_wilson,
    fmt_usd,
)
from todeval.report._svg import (
    BarSeries,
    ScatterPoint,
    StackRow,
    class_colours,
    class_legend,
    cost_scatter,
    error_bar_cell,
    group_bars,
    legend_row,
    stacked_bars,
)
from todeval.report.markup import Markup, anchor, el, join, void
from todeval.results.profile import Column, Kind, LabelSpec, ProfileBook, is_rate

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
    ident = ["#", "Run" if runs else "File"]
    if runs:
        ident += [p.role_title(role) for role in board.roles] + ["Selection"]
    else:
        ident.append("System")
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
    for row in board.rows:
        href = anchor(run=row.key) if runs else None
        name: list[object] = [el("a", {"href": href}, row.key) if href else row.key]
        if row.control:
            name.append(el("span", {"class": "badge warn", "title": CONTROL_NOTE}, "control"))
        if row.provisional:
            name.append(el("span", {"class": "badge live"}, "in progress"))
        if row.excluded:
            name.append(el("span", {"class": "badge"}, f"{row.excluded} excluded"))
        flag = board.size_flag(row)
        if flag:
            name.append(el("span", {"class": "badge warn", "title": _SIZE_NOTE}, flag))
        spread = board.rank_range(row)
        rank = el(
            "td",
            {"class": "rank", "title": board.rank_note or None},
            board.rank(row),
            el("span", {"class": "rk"}, f"[{spread}] T{board.tier(row)}") if spread else None,
        )
        cells = [rank, el("td", {"class": "txt name"}, *name)]
        if runs:
            cells += [el("td", {"class": "txt"}, row.roles.get(r, "–")) for r in board.roles]
            cells.append(el("td", {"class": "txt"}, row.selection))
        else:
            cells.append(el("td", {"class": "txt"}, row.subject))
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
    extra: list[str] = []
    if board.sizes_differ:
        extra.append(" " + _SIZE_NOTE)
    if any_wilson([board]):
        extra.append(" " + WILSON_NOTE)
    if board.has_controls:
        extra.append(" " + CONTROL_NOTE)
    if board.rank_note:
        extra.append(" " + board.rank_note)
    caption = table_caption(
        num,
        f"{board.title}: one row per {what}, best first by {p.primary_title.lower()} (micro). "
        "Each cell: value and 95% CI.",
        *extra,
    )
    attrs = {"class": "lb", "id": f"lb-{board.dom_id}-{board.kind}"}
    board_table = table(attrs, caption, _header_rows(board, primary, lo, hi), body)
    return el("div", {"class": "tscroll"}, board_table)


_SIZE_NOTE = (
    "Sizes differ: a flagged row is over fewer episodes than the board's largest run, so its "
    "rank is not comparable (its CI is wider; compare refuses different selections)."
)


def ci_note(inputs: ReportInputs, run_boards: Sequence[Board]) -> Markup:
    """What the columns mean: the generic aggregates, then each benchmark's own notes."""
    items = [
        el(
            "li",
            None,
            "Micro = mean over episodes; macro = mean of the group means (unless a benchmark's "
            "note below says otherwise). Cost / dialogue = "
            "model cost per scored episode (USD; $0 for players without a model). One board per "
            "benchmark and task set. Click a row to browse its transcripts.",
        )
    ]
    seen: set[str] = set()
    for board in run_boards:
        p = board.profile
        if p.benchmark in seen or not p.notes:
            continue
        seen.add(p.benchmark)
        items.append(el("li", None, el("b", None, p.display), ": ", " ".join(p.notes)))
    return el("ul", {"class": "notes"}, *items)


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
                system=row.subject,
                label=_subject_model(run, board) or row.key,
                cost=row.cost_per_dialogue,
                est=m.micro if m else None,
            )
        )
    if not points:
        return None
    if not any((p.cost or 0.0) > 0 for p in points):
        return None  # every point on the y axis says nothing (see cost_section)
    primary = board.profile.primary
    rate = all(is_rate(runs[r.key].summary, primary) for r in board.rows if r.key in runs)
    fig = cost_scatter(f"fig-scatter-{board.dom_id}", points, board.profile.primary_title, rate)
    return figure(
        num,
        [fig],
        f"Cost per dialogue against {board.profile.primary_title.lower()} ({board.title}); "
        "vertical bars: 95% CI. Colour and shape: architecture (system); label: model "
        "(the system's name when it has none). Click a point for its transcripts.",
    )


def cost_section(inputs: ReportInputs, boards: Sequence[Board], num: Numbering) -> list[Markup]:
    """A cost-vs-score figure per board with a cost above $0 somewhere; the boards whose costs
    are all $0 (offline players) get one line instead of an empty frame."""
    out: list[Markup] = []
    free: list[str] = []
    for board in boards:
        if not board.profile.cost or not board.rows:
            continue
        fig = scatter_section(inputs, board, num)
        if fig is not None:
            out.append(fig)
        else:
            free.append(board.title)
    if free:
        which = "Costs are all $0" if not out else "Costs are all $0 on " + "; ".join(free)
        line = f"{which} (offline players, no priced model calls): no cost-vs-score figure."
        out.append(el("p", {"class": "note", "id": "cost-zero"}, line))
    return out


def _subject_model(run: RunInput, board: Board) -> str | None:
    """The model of the run's role under test (the panel subject, else the first role)."""
    p = board.profile
    role = p.panel.subject if p.panel else next(iter(board.roles), "")
    return run.model_name(role)


# --- task groups -----------------------------------------------------------------------------

FIGURE_RUNS = 12
"""At most this many runs are drawn in a grouped-bar figure (the best by the metric)."""


def _best(
    runs: Sequence[RunInput], metric: str, limit: int, *, lower_is_better: bool = False
) -> list[RunInput]:
    """The ``limit`` best runs by the metric's micro value (in the metric's declared direction),
    in their original order; runs without a value come last."""

    def value(r: RunInput) -> float:
        v = r.summary.metrics[metric].micro.value
        if v is None:
            return float("-inf")
        return -v if lower_is_better else v

    keep = {r.key for r in sorted(runs, key=value, reverse=True)[:limit]}
    return [r for r in runs if r.key in keep]


def groups_section(
    runs: Sequence[RunInput],
    metric: str,
    title: str,
    num: Numbering,
    noun: str = "group",
    dom_id: str | None = None,
    *,
    macro_over: str | None = None,
    lower_is_better: bool = False,
) -> Markup | None:
    with_groups = [
        r for r in runs if metric in r.summary.metrics and r.summary.metrics[metric].by_group
    ]
    if not with_groups:
        return None
    groups = sorted({g for r in with_groups for g in r.summary.metrics[metric].by_group})
    drawn = _best(with_groups, metric, FIGURE_RUNS, lower_is_better=lower_is_better)
    series = [BarSeries(r.key, r.key, dict(r.summary.metrics[metric].by_group)) for r in drawn]
    rate = all(is_rate(r.summary, metric) for r in with_groups)
    bench = dom_id or with_groups[0].summary.benchmark
    fig = group_bars(f"fig-groups-{bench}", groups, series, title, rate, noun)
    kind: Kind = "rate" if rate else "number"
    table_id = f"groups-{bench}"
    groups_table = _groups_table(
        table_id, with_groups, groups, metric, kind, title, noun, num, macro_over
    )
    groups_table = el("div", {"class": "tscroll"}, groups_table)
    legend = legend_row([r.key for r in drawn])
    left_out = (
        f" The {len(drawn)} best of {len(with_groups)} runs by micro {title.lower()} are drawn; "
        "the table lists every run."
        if len(drawn) < len(with_groups)
        else ""
    )
    return join(
        [
            figure(
                num,
                [legend, el("div", {"class": "hscroll"}, fig)],
                f"{title} per {noun} and run; whiskers: 95% CI (bootstrap over the {noun}'s "
                "tasks).",
                left_out,
            ),
            groups_table,
        ]
    )


GROUP_COLUMNS = 10
"""A per-group table has one column per group up to this many groups (and no more groups than
runs); beyond, it turns: one row per group, one column per run."""


def _groups_table(
    table_id: str,
    runs: Sequence[RunInput],
    groups: Sequence[str],
    metric: str,
    kind: Kind,
    title: str,
    noun: str,
    num: Numbering,
    macro_over: str | None = None,
) -> Markup:
    macro_head = "macro" if macro_over in (None, noun) else f"{macro_over}-macro"

    def cell(r: RunInput, g: str) -> Markup:
        est = r.summary.metrics[metric].by_group.get(g)
        if est is None:
            return est_cell(None, kind)
        return est_cell(est, kind, anchor(run=r.key, group=g), f"n = {est.n}")

    shown: list[Estimate | None] = [r.summary.metrics[metric].macro for r in runs]
    shown += [e for r in runs for e in r.summary.metrics[metric].by_group.values()]
    wilson = any(e is not None and e.shown_interval()[2] for e in shown)
    if macro_over is None or macro_over == noun:
        macro_note = f"macro = mean over {noun}s."
    else:
        macro_note = (
            f"macro = the metric's macro average, a mean over {macro_over}s (not over {noun}s)."
        )
    what = f"{title} per {noun} (value, 95% CI, episodes); {macro_note}"
    caption = table_caption(num, what, *([" " + WILSON_NOTE] if wilson else []))
    attrs = {"class": "lb compact", "id": table_id}
    if len(groups) <= max(GROUP_COLUMNS, len(runs)):
        rows = [
            el(
                "tr",
                None,
                run_cell(r.key),
                *(cell(r, g) for g in groups),
                est_cell(r.summary.metrics[metric].macro, kind),
            )
            for r in runs
        ]
        return table(attrs, caption, head_row(["Run", *groups, macro_head]), rows)
    rows = [el("tr", None, txt_cell(g), *(cell(r, g) for r in runs)) for g in groups]
    macro = [est_cell(r.summary.metrics[metric].macro, kind) for r in runs]
    rows.append(el("tr", {"class": "macro"}, txt_cell(el("b", None, macro_head)), *macro))
    head = head_row(
        [noun[:1].upper() + noun[1:], *(el("a", {"href": anchor(run=r.key)}, r.key) for r in runs)]
    )
    return table(attrs, caption, head, rows)


# --- episode labels (failure taxonomy) -------------------------------------------------------


def _breakable(name: str) -> list[object]:
    """A class name with a line-break opportunity after ':' (long format-violation kinds)."""
    head, sep, tail = name.partition(":")
    return [head + sep, void("wbr"), tail] if sep else [name]


def _label_spec(name: str, runs: Sequence[RunInput], profiles: ProfileBook) -> LabelSpec:
    """The label as the first benchmark declaring it describes it (or a bare one)."""
    for r in runs:
        spec = profiles.get(r.summary.benchmark).label(name)
        if spec is not None:
            return spec
    return LabelSpec(name=name)


def _label_names(runs: Sequence[RunInput], profiles: ProfileBook) -> list[str]:
    """Label names in order of appearance, each benchmark's failure label first."""
    names: list[str] = []
    failures: list[str] = []
    for r in runs:
        failure = profiles.get(r.summary.benchmark).failure_label()
        if failure in r.summary.labels and failure not in failures:
            failures.append(failure)
        names += [n for n in r.summary.labels if n not in names]
    return failures + [n for n in names if n not in failures]


def _value_title(spec: LabelSpec, value: str) -> str:
    """A value's declared title (exact entries only: a prefix entry names a family)."""
    found = spec.value(value)
    return found.title if found is not None and found.title and not found.prefix else value


def label_colours(spec: LabelSpec, classes: Sequence[str]) -> dict[str, str]:
    def declared(value: str) -> tuple[str, str] | None:
        found = spec.value(value)
        if found is None or found.colour is None:
            return None
        return found.colour, found.value

    return class_colours(classes, declared)


def taxonomy_section(runs: Sequence[RunInput], num: Numbering, profiles: ProfileBook) -> Markup:
    parts: list[Markup] = []
    for name in _label_names(runs, profiles):
        members = [r for r in runs if name in r.summary.labels]
        spec = _label_spec(name, members, profiles)
        classes = spec.order(v for r in members for v in r.summary.labels[name])
        colours = label_colours(spec, classes)
        titles = [join(_breakable(_value_title(spec, c))) for c in classes]
        head = head_row(["Run", "episodes", *titles])
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
        value_notes = [
            f"{v.title or v.value}{'*' if v.prefix else ''}: {v.note}."
            for v in spec.values
            if v.note and any(v.matches(c) for c in classes)
        ]
        caption = table_caption(
            num,
            f"Label '{spec.title or name}' per run: episodes (share). ",
            spec.note,
            (" " + " ".join(value_notes)) if value_notes else "",
            " Click a count for those transcripts.",
        )
        attrs = {"class": "lb compact taxonomy", "id": f"tax-{name}"}
        fig = stacked_bars(
            f"fig-tax-{name}",
            name,
            classes,
            [StackRow(r.key, r.summary.labels[name]) for r in members],
            colours,
        )
        parts += [
            table(attrs, caption, head, rows),
            figure(
                num,
                [class_legend(classes, colours, {c: _value_title(spec, c) for c in classes}), fig],
                f"Share of episodes per '{spec.title or name}' value and run.",
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
            est = u.token_marks
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
                    num_cell(fmt_usd(u.cost_usd) + ("?" if u.tokens_unknown_calls else "")),
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
            "?: some counts unknown, an agent reported none, counted as 0; "
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
    head = f"{run.key} — {m.benchmark}, {run.description}"
    info = {
        "path": str(run.path),
        "config_hash": m.config_hash,
        "task_set_hash": m.task_set_hash,
        "selection": m.selection.model_dump(exclude_none=True),
        "protocol": m.protocol or "– (not recorded)",
        "n_tasks": m.n_tasks,
        "seed": m.seed,
        "package_version": m.package_version,
        "git_commit": m.git_commit or "–",
        "episodes on disk": run.n_episodes,
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
    players = {role: i.model_dump(exclude_none=True) for role, i in m.roles.items()}
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
                el("h4", None, "Roles"),
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


# --- benchmark tables ------------------------------------------------------------------------


def _table_cell(value: str | int | float | None, digits: int) -> Markup:
    if value is None:
        return num_cell("–")
    if isinstance(value, float):
        return num_cell(f"{value:.{digits}f}")
    if isinstance(value, int):
        return num_cell(f"{value:,}")
    return txt_cell(value)


def summary_tables_section(runs: Sequence[RunInput], num: Numbering) -> Markup | None:
    """The tables benchmarks add to their summaries (``Summary.tables``), per run, as given,
    and for a run with several trials per task the tables of its ``Summary.trials``."""
    blocks: list[Markup] = []
    for r in runs:
        trials = r.summary.trials.tables() if r.summary.trials is not None else []
        for t in [*r.summary.tables, *trials]:
            head = head_row(t.columns, 1)
            rows = [el("tr", None, *(_table_cell(v, t.digits) for v in row)) for row in t.rows]
            caption = table_caption(num, f"{r.key}: {t.title}. ", t.caption)
            attrs = {"class": "lb compact", "id": f"table-{r.key}-{t.name}"}
            blocks.append(
                el(
                    "details",
                    {"class": "manifest", "open": len(runs) == 1},
                    el("summary", None, f"{r.key} — {t.title}"),
                    el("div", {"class": "tscroll"}, table(attrs, caption, head, rows)),
                )
            )
    if not blocks:
        return None
    return join(
        [
            note(
                "Tables the benchmark adds to each run's summary, as written there, and for "
                "runs with several trials per task how their trials agree."
            ),
            *blocks,
        ]
    )
