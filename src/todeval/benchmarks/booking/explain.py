"""How a booking episode's score was computed, for the report's episode page.

Read from the record's details as the game wrote them (``goal``, ``bookings``,
``domain_scores``): a goal slot failed exactly when the scorer's mismatch list names it, so
the page says what the scorer said, per domain and slot, without scoring again.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from todeval.core.records import EpisodeRecord
from todeval.report.explain import ScoreCheck, ScoreExplanation, ScoreGroup

from .profile import ACCURACY

_MISMATCH = re.compile(r"^(\w+)\.(\S+): wanted (.*), (?:booked|the booking calls gave) (.*)$")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _literal(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return "" if value is None else str(value)


def _domain(
    domain: str, goal: dict[str, Any], booking: dict[str, Any], score: dict[str, Any]
) -> ScoreGroup:
    mismatches = [m for m in score.get("mismatches", []) if isinstance(m, str)]
    unbooked = "no booking" in mismatches
    failed = {}  # slot -> the value the scorer compared (from its mismatch line)
    for line in mismatches:
        m = _MISMATCH.match(line)
        if m:
            failed[f"{m.group(1)}.{m.group(2)}"] = _literal(m.group(4))
    given = _dict(booking.get("arguments"))
    checks = []
    for part in ("info", "book"):
        booked = _dict(booking.get(part))
        fallback = _dict(goal.get(f"fail_{part}"))
        for slot, wanted in _dict(goal.get(part)).items():
            key = f"{part}.{slot}"
            expected = str(wanted) + (f" (or {fallback[slot]})" if slot in fallback else "")
            if unbooked:
                checks.append(ScoreCheck(name=key, passed=False, expected=expected))
            elif key in failed:
                checks.append(
                    ScoreCheck(name=key, passed=False, expected=expected, actual=failed[key])
                )
            else:
                actual = booked.get(slot, given.get(slot, ""))
                checks.append(
                    ScoreCheck(name=key, passed=True, expected=expected, actual=str(actual))
                )
    passed_on = _dict(booking.get("reqt"))
    requested = goal.get("reqt")
    for attribute in requested if isinstance(requested, dict | list) else ():
        ok = attribute in passed_on
        checks.append(
            ScoreCheck(
                name=f"requested {attribute}",
                passed=ok,
                actual=str(passed_on.get(attribute, "")) if ok else "",
                note="" if ok else "not passed on in the booking (attributes)",
            )
        )
    # a slot the scorer's mismatch lines name failed, the others matched; inform, booked and
    # attributes are in the details' Scores box (the page embeds this once per transcript)
    note = ""
    if unbooked:
        note = "no booking"
    elif any("the booking calls gave" in line for line in mismatches):
        note = "scored on the booking calls' arguments"
    return ScoreGroup(
        title=domain,
        passed=bool(score.get("booked")) if "booked" in score else None,
        note=note,
        checks=checks,
    )


def explain(record: EpisodeRecord) -> ScoreExplanation | None:
    """Per goal domain, each informable and booking slot (wanted, booked, matched) and each
    requested attribute; the summary says what booking accuracy needed and what missed."""
    details = record.details
    goal, scores = _dict(details.get("goal")), _dict(details.get("domain_scores"))
    if not goal or not scores:
        return None
    bookings = _dict(details.get("bookings"))
    groups = [
        _domain(d, _dict(g), _dict(bookings.get(d)), _dict(scores.get(d))) for d, g in goal.items()
    ]
    value = record.metrics.get(ACCURACY)
    shown = "n/a" if value is None else f"{value:g}"
    missed = [f"{g.title} {c.name}" for g in groups for c in g.checks if c.passed is False]
    slots = sum(1 for g in groups for c in g.checks if not c.name.startswith("requested "))
    if record.metrics.get("booking.aborted") or record.metrics.get("booking.turn_cap"):
        why = (
            f"the episode did not complete ({record.reason or record.outcome.value}): every "
            "score is 0, whatever was booked"
        )
    elif not missed:
        why = f"all {slots} goal slot(s) of {len(groups)} domain(s) booked as asked"
    else:
        wrong = [m for m in missed if " requested " not in f" {m}"]
        why = (
            f"{len(wrong)} of {slots} goal slot(s) missed: "
            + ", ".join(wrong[:6])
            + (", ..." if len(wrong) > 6 else "")
            if wrong
            else "every slot booked as asked; a requested attribute was not passed on"
        )
    return ScoreExplanation(
        metric=ACCURACY,
        summary=f"Booking accuracy {shown} (every goal slot must match): {why}",
        groups=groups,
    )
