"""Leaderboard tables as CSV, Markdown or LaTeX, every estimate with its 95% CI.

* CSV: one row per run over the union of all boards' columns; each metric column is followed
  by ``_ci_low`` and ``_ci_high`` columns (full precision, for further analysis).
* Markdown and LaTeX: one table per board, cells ``value [low, high]`` (LaTeX: booktabs, the CI
  in a smaller font); needs ``\\usepackage{booktabs}``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Literal

from todeval.report._leaderboard import (
    CONTROL_NOTE,
    WILSON_NOTE,
    Board,
    Row,
    any_wilson,
    fmt_ci,
    fmt_usd,
    fmt_value,
)
from todeval.results.profile import Column

TableFormat = Literal["csv", "md", "latex"]
TABLE_FORMATS: tuple[TableFormat, ...] = ("csv", "md", "latex")

_IDENTITY = ("run", "benchmark", "task_set", "selection", "protocol", "control")


def _identity(row: Row, roles: Sequence[str]) -> list[str]:
    control = "yes" if row.control else ""
    ident = [row.key, row.benchmark, row.task_set, row.selection, row.protocol or "", control]
    return ident + [row.roles.get(r, "") for r in roles] + [str(row.n)]


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _int(value: int | None) -> str:
    return "" if value is None else str(value)


def to_csv(boards: Sequence[Board]) -> str:
    columns: list[Column] = []
    roles: list[str] = []
    for board in boards:
        columns.extend(c for c in board.profile.columns if c not in columns)
        roles.extend(r for r in board.roles if r not in roles)
    header = [*_IDENTITY, *(f"role:{r}" for r in roles), "n"]
    for c in columns:
        header += [
            c.key,
            *(f"{c.key}_{x}" for x in ("ci_low", "ci_high", "wilson_low", "wilson_high")),
        ]
    header += ["usd_per_dialogue", "provisional", "rank", "rank_low", "rank_high", "tier"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for board in boards:
        for row in board.rows:
            line = _identity(row, roles)
            for c in columns:
                est = row.cells.get(c.key)
                if est is None:
                    line += [""] * 5
                else:
                    line += [
                        _num(v)
                        for v in (
                            est.value,
                            est.ci_low,
                            est.ci_high,
                            est.wilson_low,
                            est.wilson_high,
                        )
                    ]
            line += [_num(row.cost_per_dialogue), "yes" if row.provisional else ""]
            low, high = board.rank_ranges.get(row.key, (None, None))
            rank = "" if row.control or board.kind == "score" else board.rank(row)
            line += [rank, _int(low), _int(high), board.tier(row)]
            writer.writerow(line)
    return buf.getvalue()


def _cells(board: Board, row: Row) -> list[tuple[str, str]]:
    out = []
    for c in board.profile.columns:
        est = row.cells.get(c.key)
        out.append((fmt_value(est.value if est else None, c.kind), fmt_ci(est, c.kind)))
    return out


def _n_ident(board: Board) -> int:
    """The identity columns (text, left-aligned; the last, n, is a number): rank and tier
    when the board has them, then run, roles, selection, n."""
    ranks = 2 if board.rank_ranges else 0
    return ranks + (3 if board.kind == "score" else 3 + len(board.roles))


def _headers(board: Board) -> list[str]:
    p = board.profile
    ident = ["run", *(p.role_title(r) for r in board.roles), "selection", "n"]
    if board.kind == "score":
        ident = ["file", "system", "n"]
    cost = ["cost / dialogue"] if board.profile.cost else []
    ranks = ["rank [95%]", "tier"] if board.rank_ranges else []
    return ranks + ident + [c.heading for c in board.profile.columns] + cost


def _row_parts(board: Board, row: Row) -> list[tuple[str, str]]:
    """Each cell as (text, CI text); the CI is empty for non-metric cells."""
    if board.kind == "score":
        ident = [row.key, row.subject, str(row.n)]
    else:
        key = row.key + (" (in progress)" if row.provisional else "")
        key += " (control, not ranked)" if row.control else ""
        flag = board.size_flag(row)
        n = f"{row.n} (of {board.full_n})" if flag else str(row.n)
        ident = [key, *(row.roles.get(r, "–") for r in board.roles), row.selection, n]
    cost = [fmt_usd(row.cost_per_dialogue)] if board.profile.cost else []
    ranks: list[str] = []
    if board.rank_ranges:
        spread = board.rank_range(row)
        ranks = [f"{board.rank(row)} [{spread}]" if spread else board.rank(row), board.tier(row)]
    return [(t, "") for t in ranks + ident] + _cells(board, row) + [(t, "") for t in cost]


def _notes(board: Board) -> list[str]:
    """What a reader must know about this board's cells (Wilson intervals, unequal sizes)."""
    out = []
    if any_wilson([board]):
        out.append(WILSON_NOTE)
    if board.sizes_differ:
        out.append(
            f"Sizes differ: rows marked '(of {board.full_n})' are over fewer episodes; their "
            "ranks are not comparable."
        )
    if board.has_controls:
        out.append(CONTROL_NOTE)
    if board.rank_note:
        out.append(board.rank_note)
    return out


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(boards: Sequence[Board]) -> str:
    parts = []
    for board in boards:
        header = _headers(board)
        n_text = _n_ident(board) - 1
        lines = [
            f"**{_md_escape(board.title)}** -- value [95% CI]",
            "",
            "| " + " | ".join(_md_escape(h) for h in header) + " |",
            "|" + "|".join("---" if i < n_text else "---:" for i in range(len(header))) + "|",
        ]
        for row in board.rows:
            texts = [f"{t} {ci}".strip() for t, ci in _row_parts(board, row)]
            lines.append("| " + " | ".join(_md_escape(t) for t in texts) + " |")
        lines += [f"\n{n}" for n in _notes(board)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "–": "--",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex_cells(board: Board, row: Row) -> list[str]:
    return [
        f"{latex_escape(t)} {{\\scriptsize {latex_escape(ci)}}}" if ci else latex_escape(t)
        for t, ci in _row_parts(board, row)
    ]


def to_latex(boards: Sequence[Board]) -> str:
    parts = []
    for board in boards:
        header = _headers(board)
        n_ident = _n_ident(board)
        spec = "l" * (n_ident - 1) + "r" * (len(header) - n_ident + 1)
        lines = [
            f"% {board.title}: value [95% CI]; requires \\usepackage{{booktabs}}",
            f"\\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(latex_escape(h) for h in header) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(_latex_cells(board, row)) + r" \\" for row in board.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        lines += [f"% {n}" for n in _notes(board)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def export_table(boards: Sequence[Board], fmt: TableFormat) -> str:
    """The leaderboard in ``csv``, ``md`` or ``latex``."""
    if fmt == "csv":
        return to_csv(boards)
    if fmt == "md":
        return to_markdown(boards)
    return to_latex(boards)
