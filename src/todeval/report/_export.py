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

from todeval.report._leaderboard import Board, Row, fmt_ci, fmt_usd, fmt_value
from todeval.results.profile import Column

TableFormat = Literal["csv", "md", "latex"]
TABLE_FORMATS: tuple[TableFormat, ...] = ("csv", "md", "latex")

_IDENTITY = ("run", "benchmark", "system", "user", "models", "task_set", "n")


def _identity(row: Row) -> list[str]:
    return [row.key, row.benchmark, row.system, row.user, row.models, row.task_set, str(row.n)]


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def to_csv(boards: Sequence[Board]) -> str:
    columns: list[Column] = []
    for board in boards:
        columns.extend(c for c in board.profile.columns if c not in columns)
    header = list(_IDENTITY)
    for c in columns:
        header += [c.key, f"{c.key}_ci_low", f"{c.key}_ci_high"]
    header += ["usd_per_dialogue", "provisional"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for board in boards:
        for row in board.rows:
            line = _identity(row)
            for c in columns:
                est = row.cells.get(c.key)
                if est is None:
                    line += ["", "", ""]
                else:
                    line += [_num(est.value), _num(est.ci_low), _num(est.ci_high)]
            line += [_num(row.cost_per_dialogue), "yes" if row.provisional else ""]
            writer.writerow(line)
    return buf.getvalue()


def _cells(board: Board, row: Row) -> list[tuple[str, str]]:
    out = []
    for c in board.profile.columns:
        est = row.cells.get(c.key)
        out.append((fmt_value(est.value if est else None, c.kind), fmt_ci(est, c.kind)))
    return out


def _headers(board: Board) -> list[str]:
    ident = ["run", "system", "user", "model(s)", "task set", "n"]
    if board.kind == "score":
        ident = ["file", "system", "n"]
    cost = ["cost / dialogue"] if board.profile.cost else []
    return ident + [c.heading for c in board.profile.columns] + cost


def _row_parts(board: Board, row: Row) -> list[tuple[str, str]]:
    """Each cell as (text, CI text); the CI is empty for non-metric cells."""
    if board.kind == "score":
        ident = [row.key, row.system, str(row.n)]
    else:
        key = row.key + (" (in progress)" if row.provisional else "")
        ident = [key, row.system, row.user, row.models or "–", row.task_set, str(row.n)]
    cost = [fmt_usd(row.cost_per_dialogue)] if board.profile.cost else []
    return [(t, "") for t in ident] + _cells(board, row) + [(t, "") for t in cost]


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(boards: Sequence[Board]) -> str:
    parts = []
    for board in boards:
        header = _headers(board)
        n_text = 2 if board.kind == "score" else 5
        lines = [
            f"**{_md_escape(board.title)}** -- value [95% CI]",
            "",
            "| " + " | ".join(_md_escape(h) for h in header) + " |",
            "|" + "|".join("---" if i < n_text else "---:" for i in range(len(header))) + "|",
        ]
        for row in board.rows:
            texts = [f"{t} {ci}".strip() for t, ci in _row_parts(board, row)]
            lines.append("| " + " | ".join(_md_escape(t) for t in texts) + " |")
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
        n_ident = 3 if board.kind == "score" else 6
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
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def export_table(boards: Sequence[Board], fmt: TableFormat) -> str:
    """The leaderboard in ``csv``, ``md`` or ``latex``."""
    if fmt == "csv":
        return to_csv(boards)
    if fmt == "md":
        return to_markdown(boards)
    return to_latex(boards)
