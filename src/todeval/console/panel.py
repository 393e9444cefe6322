"""Plain-text tables of a panel (``panel.json``), for the terminal."""

from __future__ import annotations

from todeval.console.tables import fmt_estimate, render_rows, wilson_note
from todeval.core.identity import CONTROL_MARK
from todeval.panels.model import PanelSummary
from todeval.panels.words import PanelWords


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _named(panel: PanelSummary, subject: str) -> str:
    """A subject member's name, marked when a privileged player (a control) played it."""
    return f"{subject} {CONTROL_MARK}" if subject in panel.controls else subject


def panel_table(panel: PanelSummary, words: PanelWords) -> str:
    """Scores per pair, the spread across the varied members, and rank stability."""
    w = words
    cells = [
        (subject, varied, panel.spread[subject].per_member.get(varied))
        for subject in panel.subjects
        if subject in panel.spread
        for varied in panel.varied_members
    ]
    rows = [[_named(panel, subject), varied, fmt_estimate(est)] for subject, varied, est in cells]
    out = [
        f"{panel.metric} per {w.varied_noun} (micro, 95% CI)",
        render_rows([w.subject_noun, w.varied_noun, "value [95% CI]"], rows),
    ]
    spread_rows = [
        [
            _named(panel, subject),
            _num(sp.spread_max_min),
            _num(sp.std_sample),
            f"{sp.best} / {sp.worst}" if sp.best else "-",
        ]
        for subject, sp in panel.spread.items()
    ]
    out += [
        "",
        f"spread across {w.varied_plural}",
        render_rows(
            [w.subject_noun, "max - min (paper)", "std (sample)", f"best / worst {w.varied_noun}"],
            spread_rows,
        ),
    ]
    rs = panel.rank_stability
    if rs is not None:
        out += ["", "rank stability"]
        out.append(
            render_rows(
                [w.varied_noun, "ranking (best first)"],
                [[v, rs.text(v)] for v in rs.rankings],
            )
        )
        tau_rows = [
            [
                pair.replace("|", " vs "),
                "undefined (a ranking is all ties)" if t is None else f"{t:.3f}",
            ]
            for pair, t in rs.kendall_tau.items()
        ]
        if tau_rows:
            out.append(render_rows([w.varied_plural, "Kendall tau-b"], tau_rows))
        changes = "yes" if rs.top_changes else "no"
        out.append(f"top {w.subject_noun} changes across {w.varied_plural}: {changes}")
    out += wilson_note(est for _, _, est in cells)
    return "\n".join(out)
