"""Panel sections: how much a subject's score depends on who plays the varied role.

Two sources, for any benchmark whose profile declares panel roles (``PanelRoles``):

* **detected**: runs of one benchmark with the same selection, protocol and config once the
  varied role's config keys are removed, and at least two distinct varied players
  (:mod:`todeval.panels.detect`);
* **panel.json**: written by ``todeval run <benchmark> --<varied role>s ...``
  (:class:`todeval.panels.model.PanelSummary`); its spread and rank-stability tables are shown
  as given, linked to its runs.

Headings and captions take the role titles, nouns and metric title from the profile. The
spread is reported both ways, labelled: max - min (the clem:todd paper's definition) and the
sample standard deviation (n - 1).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from todeval.core.records import Estimate
from todeval.panels.detect import DetectedPanel, detect_panels
from todeval.panels.model import PanelSummary, pair_key
from todeval.panels.words import PanelWords
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
from todeval.report._svg import ForestRow, forest
from todeval.report.markup import Markup, anchor, el, join
from todeval.results.profile import ProfileBook, is_rate


def spread(values: Sequence[float]) -> tuple[float | None, float | None]:
    """(max - min, sample standard deviation) over varied members; None where undefined."""
    if not values:
        return None, None
    std = statistics.stdev(values) if len(values) > 1 else None
    return max(values) - min(values), std


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def spread_line(values: Sequence[float], words: PanelWords) -> Markup:
    rng, std = spread(values)
    return el(
        "p",
        {"class": "spread"},
        el("b", None, f"Spread across {words.varied_plural}: "),
        f"max − min = {_fmt(rng)} (the clem:todd paper's definition); ",
        f"standard deviation (sample, n − 1) = {_fmt(std)}; {len(values)} {words.varied_plural}.",
    )


def _words(
    profiles: ProfileBook, benchmark: str, subject: str, varied: str, metric: str
) -> PanelWords:
    return PanelWords.of(profiles.get(benchmark), subject, varied, metric)


def detected_section(
    panel: DetectedPanel[RunInput], index: int, num: Numbering, profiles: ProfileBook
) -> Markup:
    runs = [run for _, run in panel.members]
    profile = profiles.get(panel.benchmark, [r.summary for r in runs])
    metric = profile.primary
    w = PanelWords.of(profile, panel.roles.subject, panel.roles.varied, metric)
    kind = "rate" if all(is_rate(r.summary, metric) for r in runs) else "number"
    rows = []
    forest_rows = []
    values = []
    for label, r in panel.members:
        m = r.summary.metrics.get(metric)
        micro = m.micro if m else None
        if micro is not None and micro.value is not None:
            values.append(micro.value)
        forest_rows.append(ForestRow(label, micro, r.key))
        rows.append(
            el(
                "tr",
                {"data-run": r.key, "data-href": anchor(run=r.key), "class": "clickable"},
                txt_cell(label),
                run_cell(r.key),
                num_cell(str(micro.n if micro else 0)),
                est_cell(micro, kind),
                est_cell(m.macro if m else None, kind),
            )
        )
    head = [w.varied_title, "Run", "n", f"{w.metric_title} (micro)", "macro"]
    who = f"{w.subject_title} {panel.subject}"
    caption = table_caption(
        num,
        f"{who} on {profile.display}: {w.metric_title.lower()} per {w.varied_noun} "
        "(value, 95% CI).",
    )
    attrs = {"class": "lb compact panel", "id": f"panel-auto-{index}"}
    fig = forest(f"fig-panel-auto-{index}", forest_rows, w.metric_title, kind == "rate")
    return el(
        "div",
        {"class": "panel-block"},
        el("h3", None, f"{who}: {len(runs)} {w.varied_plural}"),
        table(attrs, caption, head_row(head, 2), rows),
        spread_line(values, w),
        figure(
            num,
            [fig],
            f"{w.metric_title} of {who} under each {w.varied_noun} (95% CI).",
        ),
    )


def _with_ci(value: float | None, ci: tuple[float, float] | None) -> str:
    """The value and, when the panel has one, its 95% paired bootstrap interval."""
    text = _fmt(value)
    return text if ci is None or value is None else f"{text} [{_fmt(ci[0])}, {_fmt(ci[1])}]"


def _kind(p: PanelSummary) -> str:
    ests = [e for sp in p.spread.values() for e in sp.per_member.values()]
    vals = [v for e in ests for v in (e.value, e.ci_low, e.ci_high) if v is not None]
    return "rate" if all(0 <= v <= 1 for v in vals) else "number"


def _matrix(item: PanelInput, w: PanelWords, num: Numbering) -> Markup:
    p = item.panel
    kind = _kind(p)
    head = header_cells([w.subject_title, *p.varied_members, "max − min (paper)", "std (sample)"])
    head.append(el("th", {"class": "txt"}, f"best / worst {w.varied_noun}"))
    rows = []
    for subject in p.subjects:
        sp = p.spread.get(subject)
        cells = [txt_cell(subject)]
        for varied in p.varied_members:
            est: Estimate | None = sp.per_member.get(varied) if sp else None
            run_key = item.run_keys.get(pair_key(subject, varied))
            cells.append(est_cell(est, kind, anchor(run=run_key) if run_key else None))
        cells += [
            num_cell(_with_ci(sp.spread_max_min, sp.spread_ci) if sp else "–"),
            num_cell(_with_ci(sp.std_sample, sp.std_ci) if sp else "–"),
            txt_cell(f"{sp.best} / {sp.worst}" if sp and sp.best else "–"),
        ]
        rows.append(el("tr", None, *cells))
    return table(
        {"class": "lb compact panel", "id": f"panel-{item.key}-spread"},
        table_caption(
            num,
            f"Panel {item.key}: {w.metric_title} ({p.metric}) per {w.subject_noun} and "
            f"{w.varied_noun} (micro, 95% CI), with the spread across {w.varied_plural} as "
            "given in panel.json.",
        ),
        el("tr", None, *head),
        rows,
    )


def _differences(item: PanelInput, w: PanelWords, num: Numbering) -> Markup | None:
    """Each subject member's score under one varied member minus another, with the paired
    bootstrap interval (panels written before 0.3 have none: nothing is shown)."""
    p = item.panel
    rows = [
        el(
            "tr",
            None,
            txt_cell(subject),
            txt_cell(pair.replace("|", " → ")),
            num_cell(f"{d.diff:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]"),
            txt_cell("yes" if d.separated else "no"),
        )
        for subject, sp in p.spread.items()
        for pair, d in sp.differences.items()
    ]
    if not rows:
        return None
    return table(
        {"class": "lb compact", "id": f"panel-{item.key}-differences"},
        table_caption(
            num,
            f"Difference of each {w.subject_noun}'s {w.metric_title} between two "
            f"{w.varied_plural} (second − first) with its 95% paired bootstrap interval over "
            "the tasks both runs scored.",
        ),
        head_row([w.subject_title, w.varied_plural.capitalize(), "Difference", "CI excludes 0"], 2),
        rows,
    )


def _ranks(item: PanelInput, w: PanelWords, num: Numbering) -> Markup:
    rs = item.panel.rank_stability
    if rs is None:
        return note(
            f"One {w.subject_noun}: no rank stability (needs two or more {w.subject_plural})."
        )
    rank_rows = [
        el("tr", None, txt_cell(v), txt_cell(rs.text(v)), txt_cell(rs.top.get(v, "–")))
        for v in rs.rankings
    ]
    tau_rows = [
        el(
            "tr",
            None,
            txt_cell(pair.replace("|", " vs ")),
            num_cell(_fmt(t) if t is None else _with_ci(t, rs.kendall_tau_ci.get(pair))),
        )
        for pair, t in rs.kendall_tau.items()
    ]
    changes = "–" if rs.top_changes is None else ("yes" if rs.top_changes else "no")
    return join(
        [
            table(
                {"class": "lb compact", "id": f"panel-{item.key}-rankings"},
                table_caption(
                    num,
                    f"Ranking of {w.subject_plural} under each {w.varied_noun} (best first; "
                    "= marks a tie).",
                ),
                head_row([w.varied_title, "Ranking", f"Top {w.subject_noun}"], 3),
                rank_rows,
            ),
            table(
                {"class": "lb compact", "id": f"panel-{item.key}-tau"},
                table_caption(
                    num, f"Kendall's tau-b between the rankings of two {w.varied_plural}."
                ),
                head_row([w.varied_plural.capitalize(), "Kendall tau-b"]),
                tau_rows,
            ),
            el(
                "p",
                {"class": "spread"},
                el("b", None, f"Top {w.subject_noun} changes across {w.varied_plural}: "),
                changes,
            ),
        ]
    )


def panel_file_section(item: PanelInput, num: Numbering, profiles: ProfileBook) -> Markup:
    p = item.panel
    w = _words(profiles, p.benchmark, p.subject, p.varied, p.metric)
    parts = [
        el(
            "h3",
            None,
            f"Panel {item.key} (panel.json): {len(p.subjects)} {w.subject_noun}(s) × "
            f"{len(p.varied_members)} {w.varied_plural}",
        ),
        note(
            f"Directory {item.path}; benchmark {p.benchmark}; metric {p.metric}. Tables as "
            "written in panel.json; click a cell for the run's transcripts."
        ),
        _matrix(item, w, num),
        _differences(item, w, num),
        _ranks(item, w, num),
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
    free = [r for r in runs if r.panel is None]  # runs of a panel.json are shown with it
    detected = detect_panels(free, lambda r: r.manifest, profiles)
    if not detected and not panels:
        return None
    words = {
        *(_words(profiles, d.benchmark, d.roles.subject, d.roles.varied, "") for d in detected),
        *(_words(profiles, i.panel.benchmark, i.panel.subject, i.panel.varied, "") for i in panels),
    }
    nouns = {(w.subject_noun, w.varied_noun, w.varied_plural) for w in words}
    if len(nouns) == 1:
        ((subject, varied, plural),) = nouns
        intro = (
            f"The same {subject} against several {plural}. A large spread means the score "
            f"says as much about the {varied} as about the {subject}."
        )
    else:
        intro = (
            "The same agent against several players of another role. A large spread means "
            "the score says as much about the other role's player as about the agent."
        )
    parts: list[Markup] = [note(intro)]
    parts += [detected_section(d, i, num, profiles) for i, d in enumerate(detected)]
    parts += [panel_file_section(item, num, profiles) for item in panels]
    return join(parts)
