"""Assembles the one-file HTML report: static sections, inline CSS and script, data as JSON.

The page needs nothing from the network: styles and script are inline, figures are inline
SVG. A Content-Security-Policy allows only the page's own script (by its SHA-256 hash), so even
markup that slipped into the page could not run script.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib.resources import files

from todeval import __version__
from todeval.report._blocks import Numbering, note, section
from todeval.report._inputs import ReportInputs
from todeval.report._leaderboard import Board, boards
from todeval.report._panels import panels_section
from todeval.report._payload import (
    COMPRESS_ABOVE,
    DataMode,
    Payload,
    ProfileView,
    embed,
    episode_view,
    profile_view,
    run_view,
)
from todeval.report._review import who_failed_section
from todeval.report._sections import (
    ci_methods,
    ci_note,
    corpus_notes,
    cost_section,
    groups_section,
    leaderboard_table,
    manifest_block,
    summary_tables_section,
    taxonomy_section,
    usage_section,
)
from todeval.report._transcripts import Transcripts
from todeval.report.markup import Markup, el, join, relative_link, void

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
    ("cost", "Cost vs score"),
    ("groups", "Task groups"),
    ("taxonomy", "Failure taxonomy"),
    ("who-failed", "Who failed"),
    ("tables", "Benchmark tables"),
    ("panels", "Panels"),
    ("usage", "Usage & cost"),
    ("corpus", "Corpus scoring"),
    ("transcripts", "Transcripts"),
    ("manifests", "Manifests"),
)


def _left_out(inputs: ReportInputs) -> Markup | None:
    """What a static report did not embed: per run, shown k of n."""
    cut = [r for r in inputs.runs if len(r.transcripts) < r.n_episodes]
    if not cut:
        return None
    shown = sum(len(r.transcripts) for r in inputs.runs)
    total = sum(r.n_episodes for r in inputs.runs)
    items = [
        el("li", None, f"{r.key}: shown {len(r.transcripts):,} of {r.n_episodes:,}") for r in cut
    ]
    return el(
        "details",
        {"class": "left-out", "id": "left-out", "open": len(cut) <= 12},
        el(
            "summary",
            None,
            f"Left out: {total - shown:,} of {total:,} transcripts ({len(cut)} of "
            f"{len(inputs.runs)} run(s) show a subset).",
        ),
        el("ul", {"class": "notes"}, *items),
    )


def _transcripts_note(inputs: ReportInputs, mode: DataMode, index_name: str) -> Markup:
    total = sum(r.n_episodes for r in inputs.runs)
    browse = (
        "Filter by run, outcome, failure class or group; search matches ids, reasons, labels "
        "and every event's text. Each episode has a stable link (#ep=run/episode)."
    )
    if mode == "api":
        return note(
            f"{total:,} episodes, listed from the index ({index_name}) and loaded one at a "
            f"time. {browse}"
        )
    cap = inputs.transcripts
    shown = sum(len(r.transcripts) for r in inputs.runs)
    if cap == "all":
        which = "every episode of every run"
    else:
        which = f"failures first, at most {cap:,} per run (todeval report --transcripts N|all)"
    return note(f"{shown:,} of {total:,} episodes embedded: {which}. {browse}")


def _transcripts_skeleton(inputs: ReportInputs, mode: DataMode, index_name: str) -> Markup:
    """Controls and panes the script fills in (empty without JavaScript)."""
    controls = el(
        "div",
        {"class": "filters", "id": "filters"},
        el("label", None, "Run ", el("select", {"id": "f-run"})),
        el("label", None, "Outcome ", el("select", {"id": "f-outcome"})),
        el(
            "label",
            None,
            el("span", {"id": "f-class-name"}, "Failure class"),
            " ",
            el("select", {"id": "f-class"}),
        ),
        el(
            "label",
            None,
            el("span", {"id": "f-group-name"}, "Group"),
            " ",
            el("select", {"id": "f-group"}),
        ),
        el(
            "label",
            {"class": "grow"},
            "Search ",
            void(
                "input",
                {
                    "id": "f-q",
                    "type": "search",
                    "placeholder": "text in messages, events, reasons, ids…",
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
            _transcripts_note(inputs, mode, index_name),
            _left_out(inputs) if mode == "embedded" else None,
            el(
                "noscript",
                None,
                el("p", {"class": "warn"}, "The transcript browser needs JavaScript."),
            ),
            controls,
            panes,
        ]
    )


def _header(
    inputs: ReportInputs,
    title: str,
    generated_at: str,
    live: bool,
    back: tuple[str, str] | None = None,
) -> Markup:
    n_ep = sum(r.n_episodes for r in inputs.runs)
    meta = [
        f"Generated {generated_at} by todeval {__version__}",
        f"{len(inputs.runs)} run(s), {n_ep:,} episodes",
    ]
    if inputs.panels:
        meta.append(f"{len(inputs.panels)} panel file(s)")
    if inputs.scores:
        meta.append(f"{len(inputs.scores)} corpus-score file(s)")
    live_badge = el("span", {"id": "live", "class": "badge live"}, "live") if live else None
    up = None
    if back is not None:
        href, text = back
        up = el(
            "p",
            {"class": "meta"},
            relative_link(href, "← ", text, attrs={"id": "up", "rel": "up"}),
        )
    return el(
        "header",
        {"class": "top"},
        el(
            "div",
            {"class": "wrap"},
            up,
            el("h1", None, title, live_badge),
            el("p", {"class": "meta"}, " · ".join(meta)),
        ),
    )


def _nav(present: set[str]) -> Markup:
    links = [el("a", {"href": f"#{sid}"}, label) for sid, label in _NAV if sid in present]
    return el("nav", {"class": "toc"}, el("div", {"class": "wrap"}, *links))


def _sections(
    inputs: ReportInputs,
    run_boards: list[Board],
    mode: DataMode = "embedded",
    index_name: str = "",
) -> list[tuple[str, Markup]]:
    num = Numbering()
    out: list[tuple[str, Markup]] = []
    run_b = [b for b in run_boards if b.kind == "run"]
    score_b = [b for b in run_boards if b.kind == "score"]
    if inputs.problems:
        items = [el("li", None, p) for p in inputs.problems]
        out.append(("problems", el("div", {"class": "warn"}, "Skipped: ", el("ul", None, *items))))
    if run_b:
        tables = [leaderboard_table(b, num) for b in run_b]
        lb = section(
            "leaderboard", "Leaderboard", ci_note(inputs, run_b), *tables, ci_methods(inputs)
        )
        out.append(("leaderboard", lb))
    elif not score_b:
        out.append(("leaderboard", section("leaderboard", "Leaderboard", note("No runs found."))))
    figs = cost_section(inputs, run_b, num)
    if figs:
        out.append(("cost", section("cost", "Cost per dialogue vs score", *figs)))
    groups = []
    for b in run_b:
        keys = {row.key for row in b.rows}
        runs = [r for r in inputs.runs if r.key in keys]
        p = b.profile
        g = groups_section(
            runs,
            p.primary,
            p.primary_title,
            num,
            p.group_noun,
            b.dom_id,
            macro_over=p.macro_over,
            lower_is_better=b.lower_is_better,
        )
        if g is not None:
            groups.append(g)
    if groups:
        out.append(("groups", section("groups", "Per task group", *groups)))
    if inputs.runs:
        out.append(
            (
                "taxonomy",
                section(
                    "taxonomy",
                    "Failure taxonomy",
                    taxonomy_section(inputs.runs, num, inputs.profiles),
                ),
            )
        )
    who = (
        who_failed_section(inputs.runs, num, inputs.profiles)
        if inputs.runs and mode == "embedded"
        else None
    )
    if who is not None:
        out.append(("who-failed", section("who-failed", "Who failed", who)))
    extra = summary_tables_section(inputs.runs, num)
    if extra is not None:
        out.append(("tables", section("tables", "Benchmark tables", extra)))
    panels = panels_section(inputs.runs, inputs.panels, num, inputs.profiles)
    if panels is not None:
        out.append(("panels", section("panels", "Panels", panels)))
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
        skeleton = _transcripts_skeleton(inputs, mode, index_name)
        out.append(("transcripts", section("transcripts", "Transcripts", skeleton)))
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
    *,
    mode: DataMode = "embedded",
    indexed: Mapping[str, int] | None = None,
) -> Payload:
    """The page's data: runs and the profiles of their benchmarks, and (``embedded``) the
    runs' picked transcripts -- those not read as :class:`Transcripts`, whose views
    :func:`embed` adds (:func:`embedded_views`); ``api`` embeds none (``indexed``: episodes
    per run key)."""
    runs = []
    episodes = []
    profiles: dict[str, ProfileView] = {}
    for r in inputs.runs:
        bench = r.summary.benchmark
        profile = inputs.profiles.get(bench, [r.summary])
        if bench not in profiles:
            profiles[bench] = profile_view(profile)
        if mode == "api":
            runs.append(run_view(r, profile, (indexed or {}).get(r.key, 0)))
        else:
            runs.append(run_view(r, profile))
            if not isinstance(r.transcripts, Transcripts):  # already embedded as views
                episodes += [episode_view(r.key, e) for e in r.transcripts]
    cap = inputs.transcripts
    return Payload(
        title=title,
        generated_at=generated_at,
        live=live,
        mode=mode,
        version=version,
        poll_ms=poll_ms,
        transcripts_cap=None if cap == "all" else cap,
        runs=runs,
        profiles=profiles,
        episodes=episodes,
    )


def embedded_views(inputs: ReportInputs, mode: DataMode = "embedded") -> list[str]:
    """The page views of the runs' :class:`Transcripts`, as JSON (what ``embed`` adds)."""
    if mode != "embedded":
        return []
    return [
        v
        for r in inputs.runs
        if isinstance(r.transcripts, Transcripts)
        for v in r.transcripts.views
    ]


def build_html(
    inputs: ReportInputs,
    *,
    title: str = DEFAULT_TITLE,
    live: bool = False,
    version: str = "",
    generated_at: str | None = None,
    poll_ms: int = 2000,
    mode: DataMode = "embedded",
    indexed: Mapping[str, int] | None = None,
    index_name: str = "",
    compress_above: int | None = COMPRESS_ABOVE,
    back: tuple[str, str] | None = None,
) -> str:
    """The complete page as one string.

    ``mode="embedded"`` (a static report) embeds the runs' picked transcripts; ``"api"``
    (``todeval view``) embeds none: the script fetches them (``indexed``: per run key, the
    episodes in the index named ``index_name``). Embedded transcripts longer than
    ``compress_above`` characters of JSON in all (None: never) are embedded gzipped. ``back``
    (a relative href and its text) is a link above the title, e.g. to the page that lists this
    one (a leaderboard site's board)."""
    generated_at = generated_at or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    script = asset("report.js")
    sections = _sections(inputs, boards(inputs), mode, index_name)
    present = {sid for sid, _ in sections}
    payload = build_payload(
        inputs, title, generated_at, live, version, poll_ms, mode=mode, indexed=indexed
    )
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
    before_data = join(
        [
            _header(inputs, title, generated_at, live, back),
            _nav(present),
            el("main", {"class": "wrap"}, *[m for _, m in sections]),
            el(
                "footer",
                {"class": "wrap"},
                f"todeval {__version__} · one self-contained file: no network access, "
                "no external scripts or fonts.",
            ),
        ]
    )
    # el("html", {"lang": "en"}, head, el("body", None, ..., data, script)), joined once: the
    # data is tens of MB in a big report, and each nesting level would copy it
    data = embed(payload, embedded_views(inputs, mode), compress_above)
    tail = el("script", None, Markup(script))
    opening = '<!DOCTYPE html>\n<html lang="en">'
    return "".join([opening, head, "<body>", before_data, data, tail, "</body></html>\n"])
