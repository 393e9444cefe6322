"""Building blocks of the report's sections: numbering, numbered tables and figures, cells.

Every table of the page is ``<table><caption/><thead/><tbody/></table>``; numbered tables and
figures carry "Table N." / "Figure N." in page order (:class:`Numbering`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from todeval.core.records import Estimate
from todeval.report._leaderboard import fmt_ci, fmt_value
from todeval.report.markup import AttrValue, Markup, anchor, el, join


@dataclass
class Numbering:
    """Running numbers for tables and figures, in page order."""

    tables: int = 0
    figures: int = 0

    def table(self) -> int:
        self.tables += 1
        return self.tables

    def figure(self) -> int:
        self.figures += 1
        return self.figures


def section(sid: str, title: str, *body: object) -> Markup:
    return el("section", {"id": sid}, el("h2", None, title), *body)


def note(*parts: object) -> Markup:
    return el("p", {"class": "note"}, *parts)


def table_caption(num: Numbering, *text: object) -> Markup:
    """A caption led by the table's running number ("Table 3. ...")."""
    return el("caption", None, el("span", {"class": "tno"}, f"Table {num.table()}. "), *text)


def figure(num: Numbering, content: Sequence[object], *caption: object) -> Markup:
    """A figure (legend, SVG, ...) whose caption is led by its running number."""
    number = el("span", {"class": "tno"}, f"Figure {num.figure()}. ")
    return el("figure", None, *content, el("figcaption", None, number, *caption))


def table(
    attrs: Mapping[str, AttrValue], caption: Markup, head: Markup, rows: Sequence[Markup]
) -> Markup:
    """A table: its caption, header row(s) and body rows."""
    return el("table", attrs, caption, el("thead", None, head), el("tbody", None, *rows))


def header_cells(headers: Sequence[object], txt: int = 1) -> list[Markup]:
    """Header cells whose first ``txt`` columns hold text and the others numbers."""
    return [el("th", {"class": "txt" if i < txt else "num"}, h) for i, h in enumerate(headers)]


def head_row(headers: Sequence[object], txt: int = 1) -> Markup:
    """A header row (see :func:`header_cells`)."""
    return el("tr", None, *header_cells(headers, txt))


def txt_cell(*content: object) -> Markup:
    return el("td", {"class": "txt"}, *content)


def num_cell(*content: object) -> Markup:
    return el("td", {"class": "num"}, *content)


def run_cell(key: str) -> Markup:
    """The run's key, linked to its transcripts."""
    return txt_cell(el("a", {"href": anchor(run=key)}, key))


def est_cell(
    est: Estimate | None, kind: Any, href: str | None = None, extra: str | None = None
) -> Markup:
    """A numeric cell: the value, and its CI (and ``extra``) in smaller type below."""
    value = fmt_value(est.value if est else None, kind)
    ci = fmt_ci(est, kind)
    inner: list[object] = [el("span", {"class": "v"}, value)]
    if ci:
        inner.append(el("span", {"class": "ci"}, ci))
    if extra:
        inner.append(el("span", {"class": "ci"}, extra))
    content: Markup = join(inner)
    if href:
        content = el("a", {"href": href, "class": "cell-link"}, content)
    return num_cell(content)
