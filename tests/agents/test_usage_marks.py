"""Unknown token counts (an agent that reports no usage) are flagged wherever usage is shown:
``?`` after the counts and the cost in the console table and the report, never a silent 0."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from todeval.cli import main
from todeval.console.tables import usage_table
from todeval.core.records import CallUsage, RoleUsage, Summary

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "before_refactor" / "booking-default"


def _usage(unknown: int, known: int) -> RoleUsage:
    usage = RoleUsage()
    for _ in range(unknown):
        usage.add(CallUsage(role="system", model="agent", tokens_unknown=True, latency_s=0.2))
    for _ in range(known):
        usage.add(CallUsage(role="system", model="agent", prompt_tokens=50, completion_tokens=5))
    return usage


def test_role_usage_counts_unknown_calls_and_marks_them() -> None:
    assert _usage(2, 1).tokens_unknown_calls == 2
    assert _usage(2, 1).token_marks == "?"
    assert _usage(0, 3).token_marks == ""
    assert _usage(0, 0).model_copy(update={"estimated": True}).token_marks == "~"


def _summary(unknown: int) -> Summary:
    summary = Summary.model_validate_json((RUN / "summary.json").read_text())
    return summary.model_copy(update={"usage": {"system": _usage(unknown, 1)}})


def test_console_usage_table_flags_unknown_counts() -> None:
    table = usage_table(_summary(2))
    row = next(line for line in table.splitlines() if line.startswith("system"))
    assert "50?" in row and "5?" in row  # the counts are lower bounds
    assert "0.0000?" in row  # so is the cost
    assert "? token counts unknown for some calls (system 2)" in table
    known = usage_table(_summary(0))
    assert "?" not in known


def test_report_usage_table_flags_unknown_counts(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    summary["usage"] = {"system": _usage(2, 1).model_dump(mode="json")}
    (run / "summary.json").write_text(json.dumps(summary))
    with gzip.open(run / "episodes.jsonl.gz", "rt") as packed:  # the run's own records,
        (run / "episodes.jsonl").write_text(packed.read())  # so the summary is the one read
    (run / "episodes.jsonl.gz").unlink()
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    html = out.read_text()
    table = html[html.index('id="usage-table"') :]
    table = table[: table.index("</table>")]
    assert "50?" in table and "$0?" in table
    assert "?: some counts unknown" in table
