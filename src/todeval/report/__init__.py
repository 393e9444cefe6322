"""Rendering results: terminal tables, the one-file HTML report and the live view server.

Public API::

    inputs = load_inputs([Path("runs/a"), Path("runs/panel"), Path("mwz.json")])
    html = build_html(inputs, title="My runs")          # one self-contained page
    text = export_table(boards(inputs), "latex")        # or "csv", "md"
    server = make_server(ViewState(Path("runs")), "127.0.0.1", 8765)   # todeval view

``table`` holds the plain-text tables the CLI prints.
"""

from todeval.report._export import TABLE_FORMATS, TableFormat, export_table
from todeval.report._inputs import (
    PanelInput,
    ReportInputs,
    RunInput,
    ScoreInput,
    discover_inputs,
    load_inputs,
)
from todeval.report._leaderboard import Board, Row, boards
from todeval.report._page import DEFAULT_TITLE, build_html
from todeval.report._payload import script_safe_json
from todeval.report._server import ViewState, make_server, tree_version

__all__ = [
    "DEFAULT_TITLE",
    "TABLE_FORMATS",
    "Board",
    "PanelInput",
    "ReportInputs",
    "Row",
    "RunInput",
    "ScoreInput",
    "TableFormat",
    "ViewState",
    "boards",
    "build_html",
    "discover_inputs",
    "export_table",
    "load_inputs",
    "make_server",
    "script_safe_json",
    "tree_version",
]
