"""Plain-text tables of a panel (``panel.json``), for the terminal."""

from __future__ import annotations

from todeval.console.tables import fmt_estimate, render_rows, wilson_note
from todeval.core.identity import CONTROL_MARK
from todeval.panels.model import PanelSummary
from todeval.panels.words import PanelWords


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(value: float | None, ci: tuple[float, float] | None) -> str:
    """``0.120 [0.050, 0.210]`` (the bare value without an interval)."""
    if value is None:
        return "-"
    return f"{value:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


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
            _ci(sp.spread_max_min, sp.spread_ci),
            _ci(sp.std_sample, sp.std_ci),
            f"{sp.best} / {sp.worst}" if sp.best else "-",
        ]
        for subject, sp in panel.spread.items()
    ]
    out += [
        "",
        f"spread across {w.varied_plural}",
        render_rows(
            [
                w.subject_noun,
                "max - min (paper) [95% CI]",
                "std (sample) [95% CI]",
                f"best / worst {w.varied_noun}",
            ],
            spread_rows,
        ),
    ]
    diff_rows = [
        [
            _named(panel, subject),
            pair.replace("|", " -> "),
            f"{d.diff:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]",
            "yes" if d.separated else "no",
        ]
        for subject, sp in panel.spread.items()
        for pair, d in sp.differences.items()
    ]
    if diff_rows:
        out += [
            "",
            f"difference between two {w.varied_plural} (second - first; paired bootstrap over "
            "shared tasks)",
            render_rows(
                [w.subject_noun, w.varied_plural, "difference [95% CI]", "CI excludes 0"],
                diff_rows,
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
                "undefined (a ranking is all ties)"
                if t is None
                else _ci(t, rs.kendall_tau_ci.get(pair)),
            ]
            for pair, t in rs.kendall_tau.items()
        ]
        if tau_rows:
            out.append(render_rows([w.varied_plural, "Kendall tau-b [95% CI]"], tau_rows))
        changes = "yes" if rs.top_changes else "no"
        out.append(f"top {w.subject_noun} changes across {w.varied_plural}: {changes}")
    out += wilson_note(est for _, _, est in cells)
    return "\n".join(out)
