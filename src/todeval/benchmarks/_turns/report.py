"""The lines printed after the scorer's table: format failures, usage, where the files are."""

from __future__ import annotations

from pathlib import Path

from todeval.console.tables import fmt_estimate, usage_table
from todeval.core.records import Summary


def run_footer(summary: Summary, out: Path, predictions: str, prefix: str) -> str:
    lines = [""]
    failure = summary.metrics.get(f"{prefix}.format_failure_rate")
    if failure is not None:
        lines.append(
            f"format failures: {fmt_estimate(failure.micro, 2)} % of {failure.micro.n} turns "
            "(scored as empty responses with no state change)"
        )
    excluded = summary.excluded.get("infrastructure_error")
    if excluded:
        lines.append(
            f"left out: {excluded} dialogue(s) with an infrastructure error "
            "(run the same command again to retry them)"
        )
    usage = usage_table(summary)
    if usage:
        lines += ["", usage]
    lines += ["", f"predictions: {out / predictions}", f"run directory: {out}"]
    return "\n".join(lines)
