"""Simulator-panel sections: how much a system's score depends on the user simulator.

Two sources:

* **detected**: runs of the same benchmark whose configs are equal except for the user
  simulator (``user``, ``user_model``) form a panel when at least two simulators differ;
* **panel.json**: written by ``todeval run booking --users ...``; its spread and
  rank-stability tables are shown as given, linked to its runs.

The spread is reported both ways, labelled: max - min over simulators (the clem:todd paper's
definition) and the sample standard deviation (n - 1).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from todeval.core.records import Estimate
from todeval.report._blocks import (
    Numbering,
    est_cell,
    figure,
    head_row,
    header_cells,
    note,
    num_cell,
    run_cell,
    table,
    table_caption,
    txt_cell,
)
from todeval.report._inputs import PanelInput, RunInput
from todeval.report._markup import Markup, anchor, el, join
from todeval.report._svg import ForestRow, forest
from todeval.results.profile import ProfileBook, is_rate

_USER_KEYS = ("user", "user_model")


@dataclass(frozen=True)
class DetectedPanel:
    benchmark: str
    system: str
    metric: str
    metric_title: str
    runs: list[RunInput]


def _identity(run: RunInput) -> str:
    config = {k: v for k, v in run.config.items() if k not in _USER_KEYS}
    return json.dumps([run.summary.benchmark, config], sort_keys=True, default=str)


def detect_panels(runs: Sequence[RunInput], profiles: ProfileBook) -> list[DetectedPanel]:
    """Groups of runs that differ only in the user simulator (runs of a panel.json excluded)."""
    groups: dict[str, list[RunInput]] = {}
    for run in runs:
        if run.panel is None:
            groups.setdefault(_identity(run), []).append(run)
    out = []
    for members in groups.values():
        if len({m.user_label for m in members}) < 2:
            continue
        first = members[0]
        p = profiles.get(first.summary.benchmark, [m.summary for m in members])
        system = first.system + (f" ({first.models.split(';')[0]})" if first.models else "")
        out.append(
            DetectedPanel(first.summary.benchmark, system, p.primary, p.primary_title, members)
        )
    return out


def spread(values: Sequence[float]) -> tuple[float | None, float | None]:
    """(max - min, sample standard deviation) over simulators; None where undefined."""
    if not values:
        return None, None
    std = statistics.stdev(values) if len(values) > 1 else None
    return max(values) - min(values), std


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def spread_line(values: Sequence[float]) -> Markup:
    rng, std = spread(values)
    return el(
        "p",
        {"class": "spread"},
        el("b", None, "Spread across simulators: "),
        f"max − min = {_fmt(rng)} (the clem:todd paper's definition); ",
        f"standard deviation (sample, n − 1) = {_fmt(std)}; {len(values)} simulators.",
    )


def detected_section(panel: DetectedPanel, index: int, num: Numbering) -> Markup:
    kind = "rate" if all(is_rate(r.summary, panel.metric) for r in panel.runs) else "number"
    rows = []
    forest_rows = []
    values = []
    for r in sorted(panel.runs, key=lambda r: r.user_label):
        m = r.summary.metrics.get(panel.metric)
        micro = m.micro if m else None
        if micro is not None and micro.value is not None:
            values.append(micro.value)
        forest_rows.append(ForestRow(r.user_label, micro, r.key))
        rows.append(
            el(
                "tr",
                {"data-run": r.key, "data-href": anchor(run=r.key), "class": "clickable"},
                txt_cell(r.user_label),
                run_cell(r.key),
                num_cell(str(micro.n if micro else 0)),
                est_cell(micro, kind),
                est_cell(m.macro if m else None, kind),
            )
        )
    head = ["User simulator", "Run", "n", f"{panel.metric_title} (micro)", "macro"]
    caption = table_caption(
        num,
        f"{panel.system} on {panel.benchmark}: {panel.metric_title.lower()} per user "
        "simulator (value, 95% CI).",
    )
    attrs = {"class": "lb compact panel", "id": f"panel-auto-{index}"}
    fig = forest(f"fig-panel-auto-{index}", forest_rows, panel.metric_title, kind == "rate")
    return el(
        "div",
        {"class": "panel-block"},
        el("h3", None, f"{panel.system}: {len(panel.runs)} user simulators"),
        table(attrs, caption, head_row(head, 2), rows),
        spread_line(values),
        figure(
            num,
            [fig],
            f"{panel.metric_title} of {panel.system} under each user simulator (95% CI).",
        ),
    )


def _matrix(item: PanelInput, kind: str, num: Numbering) -> Markup:
    p = item.panel
    head = header_cells(["System", *p.users, "max − min (paper)", "std (sample)"])
    head.append(el("th", {"class": "txt"}, "best / worst simulator"))
    rows = []
    for system in p.systems:
        sp = p.spread.get(system)
        cells = [txt_cell(system)]
        for user in p.users:
            est: Estimate | None = sp.per_user.get(user) if sp else None
            run_key = item.run_keys.get(f"{system}|{user}")
            cells.append(est_cell(est, kind, anchor(run=run_key) if run_key else None))
        cells += [
            num_cell(_fmt(sp.spread_max_min if sp else None)),
            num_cell(_fmt(sp.std_sample if sp else None)),
            txt_cell(f"{sp.best_user} / {sp.worst_user}" if sp and sp.best_user else "–"),
        ]
        rows.append(el("tr", None, *cells))
    return table(
        {"class": "lb compact panel", "id": f"panel-{item.key}-spread"},
        table_caption(
            num,
            f"Panel {item.key}: {p.metric} per system and user simulator (micro, 95% CI), "
            "with the spread across simulators as given in panel.json.",
        ),
        el("tr", None, *head),
        rows,
    )


def _ranks(item: PanelInput, num: Numbering) -> Markup:
    rs = item.panel.rank_stability
    if rs is None:
        return note("One system: no rank stability (needs two or more systems).")
    rank_rows = [
        el("tr", None, txt_cell(u), txt_cell(" > ".join(r)), txt_cell(rs.top_system.get(u, "–")))
        for u, r in rs.rankings.items()
    ]
    tau_rows = [
        el("tr", None, txt_cell(pair.replace("|", " vs ")), num_cell(_fmt(t)))
        for pair, t in rs.kendall_tau.items()
    ]
    changes = "–" if rs.top_changes is None else ("yes" if rs.top_changes else "no")
    return join(
        [
            table(
                {"class": "lb compact", "id": f"panel-{item.key}-rankings"},
                table_caption(num, "Ranking of systems under each simulator (best first)."),
                head_row(["Simulator", "Ranking", "Top system"], 3),
                rank_rows,
            ),
            table(
                {"class": "lb compact", "id": f"panel-{item.key}-tau"},
                table_caption(num, "Kendall's tau-b between the rankings of two simulators."),
                head_row(["Simulators", "Kendall tau-b"]),
                tau_rows,
            ),
            el(
                "p",
                {"class": "spread"},
                el("b", None, "Top system changes across simulators: "),
                changes,
            ),
        ]
    )


def panel_file_section(item: PanelInput, num: Numbering) -> Markup:
    p = item.panel
    kind = "rate"
    ests = [e for sp in p.spread.values() for e in sp.per_user.values()]
    if any(v is not None and not 0 <= v <= 1 for e in ests for v in (e.value, e.ci_low, e.ci_high)):
        kind = "number"
    parts = [
        el(
            "h3",
            None,
            f"Panel {item.key} (panel.json): {len(p.systems)} system(s) × "
            f"{len(p.users)} simulators",
        ),
        note(
            f"Directory {item.path}; metric {p.metric}. Tables as written in panel.json; "
            "click a cell for the run's transcripts."
        ),
        _matrix(item, kind, num),
        _ranks(item, num),
    ]
    if item.missing:
        parts.append(note("Runs not (yet) on disk: " + ", ".join(item.missing)))
    return el("div", {"class": "panel-block", "id": f"panel-{item.key}"}, *parts)


def panels_section(
    runs: Sequence[RunInput],
    panels: Sequence[PanelInput],
    num: Numbering,
    profiles: ProfileBook,
) -> Markup | None:
    detected = detect_panels(runs, profiles)
    if not detected and not panels:
        return None
    parts: list[Markup] = [
        note(
            "The same system against several user simulators. A large spread means the "
            "score says as much about the simulator as about the system."
        )
    ]
    parts += [detected_section(d, i, num) for i, d in enumerate(detected)]
    parts += [panel_file_section(item, num) for item in panels]
    return join(parts)
