"""Rendering results: terminal tables, the one-file HTML report and the live view server.

Public API::

    inputs = load_inputs([Path("runs/a"), Path("runs/panel"), Path("mwz.json")])
    html = build_html(inputs, title="My runs")          # one self-contained page
    text = export_table(boards(inputs), "latex")        # or "csv", "md"
    server = make_server(ViewState(Path("runs")), "127.0.0.1", 8765)   # todeval view

``table`` holds the plain-text tables the CLI prints; ``explain`` the score-explanation hook a
benchmark registers for the episode page (``BenchmarkProfile.explainer``).
"""

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from todeval.report._export import TABLE_FORMATS, TableFormat, export_table
    from todeval.report._index import INDEX_NAME, UpdateStats
    from todeval.report._inputs import (
        PanelInput,
        ReportInputs,
        RunInput,
        ScoreInput,
        discover_inputs,
        load_inputs,
    )
    from todeval.report._leaderboard import Board, Row, boards
    from todeval.report._page import DEFAULT_TITLE, build_html, content_security_policy
    from todeval.report._payload import script_safe_json
    from todeval.report._server import ViewState, make_server, tree_version
    from todeval.report._transcripts import (
        DEFAULT_TRANSCRIPTS,
        TranscriptCap,
        cap_value,
        parse_cap,
    )

_EXPORTS = {
    "TABLE_FORMATS": "_export", "TableFormat": "_export", "export_table": "_export",
    "INDEX_NAME": "_index", "UpdateStats": "_index",
    "PanelInput": "_inputs", "ReportInputs": "_inputs", "RunInput": "_inputs",
    "ScoreInput": "_inputs", "discover_inputs": "_inputs", "load_inputs": "_inputs",
    "Board": "_leaderboard", "Row": "_leaderboard", "boards": "_leaderboard",
    "DEFAULT_TITLE": "_page", "build_html": "_page", "content_security_policy": "_page",
    "script_safe_json": "_payload",
    "ViewState": "_server", "make_server": "_server", "tree_version": "_server",
    "DEFAULT_TRANSCRIPTS": "_transcripts", "TranscriptCap": "_transcripts",
    "cap_value": "_transcripts", "parse_cap": "_transcripts",
}  # fmt: skip
"""Each name's module, imported on first use (``todeval report --help`` builds no page)."""

__getattr__ = lazy_attributes(globals(), _EXPORTS, relative=True)

__all__ = [
    "DEFAULT_TITLE",
    "DEFAULT_TRANSCRIPTS",
    "INDEX_NAME",
    "TABLE_FORMATS",
    "Board",
    "PanelInput",
    "ReportInputs",
    "Row",
    "RunInput",
    "ScoreInput",
    "TableFormat",
    "TranscriptCap",
    "UpdateStats",
    "ViewState",
    "boards",
    "build_html",
    "cap_value",
    "content_security_policy",
    "discover_inputs",
    "export_table",
    "load_inputs",
    "make_server",
    "parse_cap",
    "script_safe_json",
    "tree_version",
]
