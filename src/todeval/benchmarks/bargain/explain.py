"""How a bargaining episode's score was computed, for the report's episode page.

Read from the record's per-turn details as the scorer wrote them (``turns``: gold and
predicted labels, and the counts of correct, missed, incorrect and invalid labels): one check
per turn, the gold labels against the predicted ones, and a summary of the dialogue's
precision, recall and F1 from those counts.
"""

from __future__ import annotations

from typing import Any

from todeval.core.records import EpisodeRecord
from todeval.report.explain import ScoreCheck, ScoreExplanation, ScoreGroup


def _labels(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else ""


def _count(turn: dict[str, Any], key: str) -> int:
    value = turn.get(key, 0)
    return value if isinstance(value, int) else 0


def explain(record: EpisodeRecord) -> ScoreExplanation | None:
    """Per turn: the gold labels, the predicted ones, and whether they agree; the summary
    gives the counts behind precision, recall and F1."""
    turns = record.details.get("turns")
    if not isinstance(turns, list) or not turns:
        return None
    checks: list[ScoreCheck] = []
    totals = dict.fromkeys(("correct", "missed", "incorrect", "invalid"), 0)
    for turn in turns:
        if not isinstance(turn, dict):
            return None
        for key in totals:
            totals[key] += _count(turn, key)
        failed = bool(turn.get("failed"))
        wrong = _count(turn, "missed") + _count(turn, "incorrect") + _count(turn, "invalid")
        note = "unparseable output: every gold label missed" if failed else ""
        if not failed and wrong:
            note = ", ".join(
                f"{_count(turn, k)} {k}"
                for k in ("missed", "incorrect", "invalid")
                if _count(turn, k)
            )
        checks.append(
            ScoreCheck(
                name=f"turn {turn.get('index', len(checks))} ({turn.get('speaker', '?')})",
                passed=not failed and not wrong,
                expected=_labels(turn.get("gold")),
                actual=_labels(turn.get("predicted")),
                note=note,
            )
        )
    f1 = record.metrics.get("bargain.f1")
    shown = "n/a" if f1 is None else f"{f1:.3f}"
    c, m, i, v = (totals[k] for k in ("correct", "missed", "incorrect", "invalid"))
    return ScoreExplanation(
        metric="bargain.f1",
        summary=f"F1 {shown}: {c} correct, {m} missed, {i} incorrect, {v} invalid label(s) over "
        f"{len(turns)} turn(s); precision = correct / (correct + incorrect + invalid) = "
        f"{c}/{c + i + v}, recall = correct / (correct + missed) = {c}/{c + m}",
        groups=[ScoreGroup(title="labels per turn", passed=c == c + m + i + v, checks=checks)],
    )
