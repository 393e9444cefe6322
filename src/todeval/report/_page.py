"""Assembles the one-file HTML report: static sections, inline CSS and script, data as JSON.

The page needs nothing from the network: styles and script are inline, figures are inline
SVG. A Content-Security-Policy allows only the page's own script (by its SHA-256 hash), so even
markup that slipped into the page could not run script.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from importlib.resources import files

from todeval import __version__
from todeval.report._blocks import Numbering, note, section
from todeval.report._inputs import ReportInputs
from todeval.report._leaderboard import Board, boards
from todeval.report._markup import Markup, el, join, void
from todeval.report._panels import panels_section
from todeval.report._payload import Payload, embed, episode_view, run_view
from todeval.report._sections import (
    ci_methods,
    ci_note,
    corpus_notes,
    groups_section,
    leaderboard_table,
    manifest_block,
    scatter_section,
    taxonomy_section,
    usage_section,
)

DEFAULT_TITLE = "todeval report"


def asset(name: str) -> str:
    return files("todeval.report").joinpath("assets", name).read_text(encoding="utf-8")


def script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def content_security_policy(script: str, *, header: bool = False) -> str:
    """Only the page's own inline script may run; no fetches except the live-view poll."""
    parts = [
        "default-src 'none'",
        f"script-src '{script_hash(script)}'",
        "style-src 'unsafe-inline'",
        "img-src data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
    ]
    if header:
        parts.append("frame-ancestors 'none'")
    return "; ".join(parts)


_NAV = (
    ("leaderboard", "Leaderboard"),
    ("cost", "Cost vs accuracy"),
    ("groups", "Domain groups"),
    ("taxonomy", "Failure taxonomy"),
    ("panels", "Simulator panels"),
    ("usage", "Usage & cost"),
    ("corpus", "Corpus scoring"),
    ("transcripts", "Transcripts"),
    ("manifests", "Manifests"),
)


def _transcripts_skeleton(n_episodes: int) -> Markup:
    """Controls and panes the script fills in (empty without JavaScript)."""
    controls = el(
        "div",
        {"class": "filters", "id": "filters"},
        el("label", None, "Run ", el("select", {"id": "f-run"})),
        el("label", None, "Outcome ", el("select", {"id": "f-outcome"})),
        el("label", None, "Failure class ", el("select", {"id": "f-class"})),
        el("label", None, "Group ", el("select", {"id": "f-group"})),
        el(
            "label",
            {"class": "grow"},
            "Search ",
            void(
                "input",
                {
                    "id": "f-q",
                    "type": "search",
                    "placeholder": "text in messages, tool calls, DB rows, ids…",
                    "autocomplete": "off",
                },
            ),
        ),
        el("span", {"id": "f-label", "class": "chip", "hidden": True}),
        el("button", {"id": "f-clear", "type": "button"}, "Clear filters"),
        el("span", {"id": "f-count", "class": "count"}),
    )
    panes = el(
        "div",
        {"class": "browser"},
        el("div", {"id": "ep-list", "class": "ep-list", "role": "listbox"}),
        el(
            "div",
            {"id": "ep-detail", "class": "ep-detail"},
            el("p", {"class": "placeholder"}, "Select an episode."),
        ),
    )
    return join(
        [
            note(
                f"{n_episodes:,} episodes. Filter by run, outcome, failure class or domain "
                "group; search matches every message, tool call, DB row and reason. Each "
                "episode has a stable link (#ep=run/episode)."
            ),
            el(
                "noscript",
                None,
                el("p", {"class": "warn"}, "The transcript browser needs JavaScript."),
            ),
            controls,
            panes,
        ]
    )


def _header(inputs: ReportInputs, title: str, generated_at: str, live: bool) -> Markup:
    n_ep = sum(len(r.episodes) for r in inputs.runs)
    meta = [
        f"Generated {generated_at} by todeval {__version__}",
        f"{len(inputs.runs)} run(s), {n_ep:,} episodes",
    ]
    if inputs.panels:
        meta.append(f"{len(inputs.panels)} panel file(s)")
    if inputs.scores:
        meta.append(f"{len(inputs.scores)} corpus-score file(s)")
    live_badge = el("span", {"id": "live", "class": "badge live"}, "live") if live else None
    return el(
        "header",
        {"class": "top"},
        el(
            "div",
            {"class": "wrap"},
            el("h1", None, title, live_badge),
            el("p", {"class": "meta"}, " · ".join(meta)),
        ),
    )


def _nav(present: set[str]) -> Markup:
    links = [el("a", {"href": f"#{sid}"}, label) for sid, label in _NAV if sid in present]
    return el("nav", {"class": "toc"}, el("div", {"class": "wrap"}, *links))


def _sections(inputs: ReportInputs, run_boards: list[Board]) -> list[tuple[str, Markup]]:
    num = Numbering()
    out: list[tuple[str, Markup]] = []
    run_b = [b for b in run_boards if b.kind == "run"]
    score_b = [b for b in run_boards if b.kind == "score"]
    if inputs.problems:
        items = [el("li", None, p) for p in inputs.problems]
        out.append(("problems", el("div", {"class": "warn"}, "Skipped: ", el("ul", None, *items))))
    if run_b:
        tables = [leaderboard_table(b, num) for b in run_b]
        lb = section("leaderboard", "Leaderboard", ci_note(inputs), *tables, ci_methods(inputs))
        out.append(("leaderboard", lb))
    elif not score_b:
        out.append(("leaderboard", section("leaderboard", "Leaderboard", note("No runs found."))))
    figs = [f for b in run_b if b.profile.cost and (f := scatter_section(inputs, b, num))]
    if figs:
        out.append(("cost", section("cost", "Cost per dialogue vs accuracy", *figs)))
    groups = []
    for b in run_b:
        runs = [r for r in inputs.runs if r.summary.benchmark == b.profile.benchmark]
        g = groups_section(runs, b.profile.primary, b.profile.primary_title, num)
        if g is not None:
            groups.append(g)
    if groups:
        out.append(("groups", section("groups", "Per domain group", *groups)))
    if inputs.runs:
        out.append(
            (
                "taxonomy",
                section("taxonomy", "Failure taxonomy", taxonomy_section(inputs.runs, num)),
            )
        )
    panels = panels_section(inputs.runs, inputs.panels, num, inputs.profiles)
    if panels is not None:
        out.append(("panels", section("panels", "Simulator panels", panels)))
    if inputs.runs:
        out.append(
            ("usage", section("usage", "Usage, cost and latency", usage_section(inputs.runs)))
        )
    if score_b:
        tables = [leaderboard_table(b, num) for b in score_b]
        out.append(
            (
                "corpus",
                section(
                    "corpus",
                    "Corpus scoring",
                    note(
                        "Summaries written by todeval score ... -o FILE (scores on the "
                        "evaluators' own scale, e.g. 0–100). Each cell: value and 95% CI."
                    ),
                    *tables,
                    corpus_notes(inputs),
                ),
            )
        )
    if inputs.runs:
        n_ep = sum(len(r.episodes) for r in inputs.runs)
        out.append(
            ("transcripts", section("transcripts", "Transcripts", _transcripts_skeleton(n_ep)))
        )
        blocks = [manifest_block(r) for r in inputs.runs]
        out.append(
            (
                "manifests",
                section(
                    "manifests",
                    "Run manifests",
                    note("What each run is: config, versions, players and sessions."),
                    *blocks,
                ),
            )
        )
    return out


def build_payload(
    inputs: ReportInputs,
    title: str,
    generated_at: str,
    live: bool,
    version: str,
    poll_ms: int = 2000,
) -> Payload:
    runs = []
    episodes = []
    for r in inputs.runs:
        primary = inputs.profiles.get(r.summary.benchmark, [r.summary]).primary
        runs.append(run_view(r, primary))
        episodes += [episode_view(r.key, e) for e in r.episodes]
    return Payload(
        title=title,
        generated_at=generated_at,
        live=live,
        version=version,
        poll_ms=poll_ms,
        runs=runs,
        episodes=episodes,
    )


def build_html(
    inputs: ReportInputs,
    *,
    title: str = DEFAULT_TITLE,
    live: bool = False,
    version: str = "",
    generated_at: str | None = None,
    poll_ms: int = 2000,
) -> str:
    """The complete page as one string."""
    generated_at = generated_at or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    script = asset("report.js")
    sections = _sections(inputs, boards(inputs))
    present = {sid for sid, _ in sections}
    payload = build_payload(inputs, title, generated_at, live, version, poll_ms)
    head = el(
        "head",
        None,
        void("meta", {"charset": "utf-8"}),
        void(
            "meta",
            {"http-equiv": "Content-Security-Policy", "content": content_security_policy(script)},
        ),
        void("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        void("meta", {"name": "generator", "content": f"todeval {__version__}"}),
        void("link", {"rel": "icon", "href": "data:,"}),
        el("title", None, title),
        el("style", None, Markup(asset("report.css"))),
    )
    body = el(
        "body",
        None,
        _header(inputs, title, generated_at, live),
        _nav(present),
        el("main", {"class": "wrap"}, *[m for _, m in sections]),
        el(
            "footer",
            {"class": "wrap"},
            f"todeval {__version__} · one self-contained file: no network access, "
            "no external scripts or fonts.",
        ),
        embed(payload),
        el("script", None, Markup(script)),
    )
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, body) + "\n"
