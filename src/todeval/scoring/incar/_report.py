"""A readable table of In-Car scores."""

from __future__ import annotations

from todeval.core.records import Estimate
from todeval.scoring.incar._evaluate import METRICS, IncarResult
from todeval.scoring.incar._ontology import INTENTS


def _value(estimate: Estimate | None) -> str:
    if estimate is None or estimate.value is None:
        return "-"
    return f"{estimate.value:.2f}"


def _ci(estimate: Estimate) -> str:
    if estimate.value is None or estimate.ci_low is None or estimate.ci_high is None:
        return "-"
    return f"[{estimate.ci_low:.2f}, {estimate.ci_high:.2f}]"


def format_table(result: IncarResult) -> str:
    """Header lines, then one row per metric: value, 95% CI, per-intent values, macro."""
    states = "gold states (no predicted states given)" if result.gold_states else "predicted states"
    lines = [
        f"In-Car Assistant (KVRET) {result.split}: {result.n_scored}/{result.n_dialogues} "
        f"dialogues, {result.n_turns} turns scored; Match counted over "
        f"{result.match_evaluated} dialogues; {states}",
        "Scale 0-100. 'lineage' = computed as GALAXY's KvretEvaluator does, on responses as "
        "given (compare published figures with these); 'modern' = sacrebleu 13a.",
    ]
    header = ["metric", "value", "95% CI", *INTENTS, "macro"]
    rows = [header]
    for name, title in METRICS.items():
        summary = result.summary.metrics[name]
        rows.append(
            [
                title,
                _value(summary.micro),
                _ci(summary.micro),
                *(_value(summary.by_group.get(intent)) for intent in INTENTS),
                _value(summary.macro),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for j, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
