"""The leaderboard site's pages: the index of boards, one page per board, the excluded list.

Every page is one static file with its styles inline and no script (its Content-Security-Policy
allows none); links between pages are relative, so the site opens from disk (``file://``) as
from any static host. A board's rows and their rank intervals and tiers are the report's
(:func:`todeval.report.boards` over the board's runs); its columns are the benchmark's profile
(primary metric first, each with the direction it is better in). Each row carries the
submission's verdict: its badge (verified standard or custom, and who ran the agent), its
description, and a link to its transcripts (the submission's own report page, whose episode
viewer opens each episode at ``#ep=<submission>/<episode>``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from todeval import __version__
from todeval.core.records import Estimate
from todeval.leaderboard.collect import BoardKey, Collected, Submission
from todeval.report import Board, Row
from todeval.report.markup import Markup, el, join, void
from todeval.results.profile import BenchmarkProfile, Column, Kind
from todeval.submission.verify import TRUST, Verdict

REPORTS = "submissions"
"""The folder of the submissions' report pages (and verdicts) inside the site."""
INDEX = "index.html"
EXCLUDED = "excluded.html"

_LINK = re.compile(
    r"^(?:[A-Za-z0-9_][A-Za-z0-9_.-]*/)*[A-Za-z0-9_][A-Za-z0-9_.-]*(?:#[\w.~%=&/+-]*)?$"
)

BADGES = {
    "isolated": ("verified, isolated", "iso"),
    "endpoint": ("verified, self-run", "self"),
    "in-process": ("verified, trusted code", "trusted"),
    "built-in": ("verified, built-in", "builtin"),
}
"""The verification badge by the agent's channel: (text, CSS class)."""

MEANING = {
    "isolated": "the agent ran in the OS sandbox (--isolate): it could not read the package's "
    "data, the run or the evaluator's environment",
    "endpoint": "the submitter's own endpoint answered: its code is not seen, its replies are "
    "as recorded",
    "in-process": "a package.module:Class ran inside the evaluator's process and could read "
    "everything the package ships, the answers included: as good as your trust in its author",
    "built-in": "todeval's own player: a reference point",
}

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)

SITE_CSS = """
.badge.v-iso { background: #d9f2e3; color: #14532d; }
.badge.v-self { background: #e0ecfb; color: #1e3a8a; }
.badge.v-trusted { background: #fff1d6; color: #8a5300; }
.badge.v-builtin { background: #eceff3; color: #3b4652; }
.badge.v-custom { background: #f3e8ff; color: #5b2490; }
.badge.v-standard { background: #d9f2e3; color: #14532d; }
table.lb td .desc { display: block; color: var(--muted); font-size: 12px; max-width: 28em; }
table.lb td.badges .badge { display: inline-block; margin: 0 4px 3px 0; white-space: nowrap; }
details.verdict { margin: 4px 0; }
details.verdict pre { white-space: pre-wrap; font-size: 12px; margin: 4px 0 10px 16px; }
table.lb.site thead th { white-space: normal; vertical-align: bottom; }
table.lb td.agent { max-width: 14em; }
ul.reasons { margin: 0; padding-left: 18px; }
"""


def link(href: str, *children: object, cls: str | None = None) -> Markup:
    """``<a>`` to another page of the site: a relative path (and anchor) made of plain names,
    never a scheme, an absolute path or a way out of the site."""
    if not _LINK.match(href) or ".." in href.partition("#")[0].split("/"):
        raise ValueError(f"refusing link {href[:60]!r}")
    attrs = f' class="{html.escape(cls)}"' if cls else ""
    return Markup(f'<a href="{html.escape(href, quote=True)}"{attrs}>{join(children)}</a>')


def board_file(board_id: str) -> str:
    return f"board-{board_id}.html"


def report_file(sub: Submission) -> str:
    return f"{REPORTS}/{sub.id}.html"


def verdict_file(sub: Submission) -> str:
    return f"{REPORTS}/{sub.id}.verdict.json"


def badge(verdict: Verdict) -> tuple[str, str]:
    """(text, CSS class) of a verified submission's trust badge."""
    text, cls = BADGES.get(verdict.channel or "", ("verified, channel not recorded", "builtin"))
    return text, f"v-{cls}"


def badges(verdict: Verdict) -> Markup:
    text, cls = badge(verdict)
    trust = TRUST.get(verdict.channel or "", "the manifest does not say how the agent ran")
    kind = "standard" if verdict.standard else "custom"
    why = "; ".join(verdict.custom) or "the benchmark's standard protocol, every task"
    return join(
        [
            el("span", {"class": f"badge {cls}", "title": trust}, text),
            el("span", {"class": f"badge v-{kind}", "title": why}, kind),
        ]
    )


# --- cells -----------------------------------------------------------------------------------


def _digits(kind: Kind) -> int:
    return 3 if kind == "rate" else 2


def _estimate(est: Estimate | None, kind: Kind) -> Markup:
    """The value and, below it, its 95% CI (W: the Wilson interval, as in the report)."""
    if est is None or est.value is None:
        return el("td", {"class": "num"}, el("span", {"class": "v"}, "–"))
    d = _digits(kind)
    parts: list[object] = [el("span", {"class": "v"}, f"{est.value:.{d}f}")]
    low, high, wilson = est.shown_interval()
    if low is not None and high is not None:
        ci = f"[{low:.{d}f}, {high:.{d}f}]" + ("W" if wilson else "")
        parts.append(el("span", {"class": "ci"}, ci))
    return el("td", {"class": "num"}, *parts)


def usd(value: float | None) -> str:
    if value is None:
        return "–"
    if value == 0:
        return "$0"
    return f"${value:.2e}" if abs(value) < 0.001 else f"${value:.4f}"


ARROWS = {"higher": "↑", "lower": "↓"}


def _heading(profile: BenchmarkProfile, metric: str, title: str) -> str:
    arrow = ARROWS.get(profile.better_direction(metric) or "", "")
    return f"{title} {arrow}".strip()


# --- pages -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SiteBoard:
    """One board of the site: its key, file id, the report's board and its submissions."""

    id: str
    key: BoardKey
    board: Board
    submissions: dict[str, Submission]  # by row key (the submission's id)

    @property
    def benchmark(self) -> str:
        return self.key[0]

    @property
    def title(self) -> str:
        _bench, task_set, digest, protocol = self.key
        parts = [self.board.profile.display, f"task set {task_set or '–'}"]
        if protocol:
            parts.append(f"protocol {protocol}")
        return " · ".join(parts) + f" (hash {digest[:12]})"


def page(title: str, meta: str, *body: object) -> str:
    """A whole page of the site's root folder: styles inline, no script."""
    css = files("todeval.report").joinpath("assets", "report.css").read_text(encoding="utf-8")
    head = el(
        "head",
        None,
        void("meta", {"charset": "utf-8"}),
        void("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}),
        void("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        void("meta", {"name": "generator", "content": f"todeval {__version__}"}),
        void("link", {"rel": "icon", "href": "data:,"}),
        el("title", None, title),
        el("style", None, Markup(css + SITE_CSS)),
    )
    nav = el(
        "nav",
        {"class": "toc"},
        el(
            "div",
            {"class": "wrap"},
            link(INDEX, "Boards"),
            link(EXCLUDED, "Excluded"),
        ),
    )
    top = el(
        "header",
        {"class": "top"},
        el("div", {"class": "wrap"}, el("h1", None, title), el("p", {"class": "meta"}, meta)),
    )
    foot = el(
        "footer",
        {"class": "wrap"},
        f"todeval {__version__} · todeval leaderboard build · static pages: no server, no "
        "network, no script.",
    )
    body_html = el("body", None, top, nav, el("main", {"class": "wrap"}, *body), foot)
    return f'<!DOCTYPE html>\n<html lang="en">{head}{body_html}</html>\n'


def _latency(sub: Submission) -> Markup:
    run = sub.run
    assert run is not None
    s = run.summary
    total = s.timing.get("episode_seconds_total")
    per = f"{total / s.n_episodes:.2f} s" if total is not None and s.n_episodes else "–"
    parts: list[object] = [el("span", {"class": "v"}, per)]
    role = sub.verdict.subject if sub.verdict is not None else None
    lat = s.latency.get(role or "", {})
    if "p50" in lat:
        parts.append(el("span", {"class": "ci"}, f"calls p50 {lat['p50']:.2f} s"))
    return el("td", {"class": "num"}, *parts)


def _breakable(name: str) -> list[object]:
    """A long ``package.module:Class`` name, breakable after each dot and colon."""
    out: list[object] = []
    for part in re.split(r"(?<=[.:])", name):
        out += [part, void("wbr")]
    return out[:-1]


def _row(sb: SiteBoard, row: Row) -> Markup:
    board, sub = sb.board, sb.submissions[row.key]
    verdict = sub.verdict
    assert verdict is not None
    profile = board.profile
    spread = board.rank_range(row)
    rank = el(
        "td",
        {"class": "rank", "title": board.rank_note or None},
        board.rank(row),
        el("span", {"class": "rk"}, f"[{spread}] T{board.tier(row)}") if spread else None,
    )
    described = verdict.system.description + (
        f" ({verdict.system.model})" if verdict.system.model else ""
    )
    transcripts = link(f"{report_file(sub)}#transcripts", "transcripts", cls="transcripts")
    name = el(
        "td",
        {"class": "txt name"},
        link(report_file(sub), sub.id),
        el("span", {"class": "desc"}, described),
        el("span", {"class": "desc"}, transcripts),
    )
    agent = el("td", {"class": "txt agent"}, *_breakable(verdict.player or "–"))
    cells = [rank, name, agent, el("td", {"class": "txt badges"}, badges(verdict))]
    cells.append(
        el(
            "td",
            {"class": "num"},
            el("span", {"class": "v"}, f"{verdict.n_tasks} × {verdict.trials}"),
            el("span", {"class": "ci"}, f"n = {row.n}"),
        )
    )
    cells += [_estimate(row.cells.get(c.key), c.kind) for c in profile.columns]
    if profile.cost:
        cells.append(el("td", {"class": "num"}, usd(row.cost_per_dialogue)))
    cells.append(_latency(sub))
    return el("tr", {"data-submission": sub.id}, *cells)


def board_table(sb: SiteBoard) -> Markup:
    board, profile = sb.board, sb.board.profile
    heads = ["Rank", "Submission", "Agent", "Verification", "Tasks × trials"]
    heads += [_heading(profile, c.metric, c.heading) for c in profile.columns]
    if profile.cost:
        heads.append("Cost / dialogue")
    heads.append("Time / dialogue")
    text = {"Submission", "Agent", "Verification"}
    head = el(
        "tr",
        None,
        *[el("th", {"class": "txt" if h in text else "num"}, h) for h in heads],
    )
    caption = el(
        "caption",
        None,
        f"{sb.title}: one row per verified submission, best first by "
        f"{profile.primary_title.lower()} (micro). Each cell: value and 95% CI.",
    )
    rows = [_row(sb, r) for r in board.rows]
    table = el(
        "table",
        {"class": "lb site", "id": f"board-{sb.id}"},
        caption,
        el("thead", None, head),
        el("tbody", None, *rows),
    )
    return el("div", {"class": "tscroll"}, table)


def _notes(sb: SiteBoard) -> Markup:
    board, profile = sb.board, sb.board.profile
    items: list[object] = []
    if board.rank_note:
        items.append(board.rank_note)
    elif len(board.rows) > 1:
        items.append("Rank [95%] and tiers need two submissions with at least two tasks in common.")
    items.append(
        "↑ higher is better, ↓ lower is better (the benchmark's profile); a metric without an "
        "arrow is a figure to read, not to win on."
    )
    items += list(profile.notes)
    items.append(
        "Verification: todeval submit verify re-checked each archive here (task set hash, every "
        "task's trials, options, no privileged player, scorer version, metrics re-computed, the "
        "episodes replayed where the benchmark declares a replay). The badge says who ran the "
        "agent: " + "; ".join(f"{BADGES[c][0]} = {MEANING[c]}" for c in BADGES) + ". Standard: "
        "the benchmark's standard protocol over every task; custom: see the badge's title and "
        "the verdict below."
    )
    items.append(
        "Time / dialogue: wall time per episode (it depends on the machine); calls p50: the "
        "median model-call latency of the role under test, when it called a model."
    )
    return el("ul", {"class": "notes"}, *[el("li", None, i) for i in items])


def _verdicts(sb: SiteBoard) -> Markup:
    blocks = []
    for row in sb.board.rows:
        sub = sb.submissions[row.key]
        assert sub.verdict is not None
        blocks.append(
            el(
                "details",
                {"class": "verdict", "id": f"verdict-{sub.id}"},
                el("summary", None, f"{sub.id}: {sub.verdict.headline}"),
                el("pre", None, "\n".join(sub.verdict.lines())),
                el("p", {"class": "note"}, link(verdict_file(sub), "the verdict as JSON")),
            )
        )
    return el("section", {"id": "verdicts"}, el("h2", None, "Verdicts"), *blocks)


def board_page(sb: SiteBoard, generated: str) -> str:
    meta = (
        f"{len(sb.board.rows)} verified submission(s) · generated {generated} by todeval "
        f"{__version__}"
    )
    return page(
        sb.title,
        meta,
        el("section", {"id": "board"}, board_table(sb), _notes(sb)),
        _verdicts(sb),
    )


def index_page(site: Sequence[SiteBoard], collected: Collected, generated: str) -> str:
    rows = []
    for sb in site:
        _bench, task_set, digest, protocol = sb.key
        leader = sb.board.rows[0] if sb.board.rows else None
        primary = Column(metric=sb.board.profile.primary, title="")
        lead: list[object] = ["–"]
        if leader is not None:
            est = leader.cells.get(primary.key)
            title = sb.board.profile.primary_title.lower()
            value = "" if est is None or est.value is None else f" ({title} {est.value:.3f})"
            lead = [leader.key, value]
        rows.append(
            el(
                "tr",
                {"data-board": sb.id},
                el("td", {"class": "txt"}, link(board_file(sb.id), sb.board.profile.display)),
                el("td", {"class": "txt"}, task_set or "–"),
                el("td", {"class": "txt"}, el("code", None, digest[:12])),
                el("td", {"class": "txt"}, protocol or "–"),
                el("td", {"class": "num"}, str(len(sb.board.rows))),
                el("td", {"class": "txt"}, *lead),
            )
        )
    heads = ["Benchmark", "Task set", "Hash", "Protocol", "Submissions", "Leader"]
    head = el(
        "tr", None, *[el("th", {"class": "num" if h == "Submissions" else "txt"}, h) for h in heads]
    )
    caption = el(
        "caption",
        None,
        "One board per benchmark, task set (its hash) and protocol: submissions on different "
        "ones are never ranked together.",
    )
    boards_table = el(
        "table",
        {"class": "lb compact", "id": "boards"},
        caption,
        el("thead", None, head),
        el("tbody", None, *rows),
    )
    n_out = len(collected.excluded)
    out_note = el(
        "p",
        {"class": "note", "id": "excluded-note"},
        f"{n_out} submission(s) kept off the boards (refused by verify, or not a submission "
        "archive): ",
        link(EXCLUDED, "see why"),
        ".",
    )
    body = boards_table if rows else el("p", {"class": "note"}, "No verified submission.")
    meta = (
        f"{len(collected.submissions)} archive(s), {len(collected.verified)} verified, "
        f"{n_out} excluded · generated {generated} by todeval {__version__}"
    )
    return page("Leaderboards", meta, el("section", {"id": "index"}, body, out_note))


def excluded_page(collected: Collected, generated: str) -> str:
    rows = []
    for sub in collected.excluded:
        bench = sub.verdict.benchmark if sub.verdict is not None else "–"
        reasons = [el("li", None, r) for r in sub.reasons]
        rows.append(
            el(
                "tr",
                {"data-submission": sub.id},
                el("td", {"class": "txt"}, sub.archive),
                el("td", {"class": "txt"}, bench),
                el(
                    "td",
                    {"class": "txt"},
                    sub.verdict.system.description if sub.verdict is not None else "–",
                ),
                el("td", {"class": "txt"}, el("ul", {"class": "reasons"}, *reasons)),
            )
        )
    heads = ["Archive", "Benchmark", "Description", "Why it is not on a board"]
    head = el("tr", None, *[el("th", {"class": "txt"}, h) for h in heads])
    caption = el(
        "caption",
        None,
        "Archives refused by todeval submit verify (each reason one line) or that are not "
        "submission archives. They are on no board and their transcripts are not published.",
    )
    body = (
        el(
            "table",
            {"class": "lb", "id": "excluded"},
            caption,
            el("thead", None, head),
            el("tbody", None, *rows),
        )
        if rows
        else el("p", {"class": "note"}, "No submission was excluded.")
    )
    meta = f"{len(rows)} excluded · generated {generated} by todeval {__version__}"
    return page("Excluded submissions", meta, el("section", {"id": "excluded-list"}, body))


__all__ = [
    "BADGES",
    "EXCLUDED",
    "INDEX",
    "MEANING",
    "REPORTS",
    "SiteBoard",
    "badge",
    "board_file",
    "board_page",
    "excluded_page",
    "index_page",
    "link",
    "report_file",
    "verdict_file",
]
