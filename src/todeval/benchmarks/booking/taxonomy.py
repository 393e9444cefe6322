"""Failure taxonomy of booking episodes.

Every episode gets a ``failure_class``:

* ``success``;
* ``wrong_booking`` -- the dialogue completed, every goal domain was booked, but some slot is
  wrong;
* ``no_booking`` -- the dialogue completed with a goal domain left unbooked;
* ``turn_cap`` -- 15 turns without a valid ``done``;
* ``format_violation:<kind>`` -- aborted by a malformed action (no_tool_call, unknown_tool,
  invalid_json, not_an_object, schema, empty_message, other);
* ``inner_loop_cap`` -- aborted after too many calls without a follow-up;
* ``user_simulator_failure``, ``system_error`` (the system raised or its endpoint failed: a
  failure), ``infrastructure_error``.

On the ``unrealistic`` set, failures are also split by what the system did with the nonsense
values (``unrealistic`` label): ``repair`` -- it tried to book a realistic substitute (a value
valid in the regular MultiWOZ schema, e.g. 2 people for "7B") instead of the goal's value;
``booked_nothing``; ``other``.
"""

from __future__ import annotations

import re
from typing import Any

from todeval.benchmarks.booking.schema import BOOKING_TOOLS, TIME_PATTERN, slot_values
from todeval.benchmarks.booking.tasks import BookingTask, normalise_key, normalise_value
from todeval.core import safejson
from todeval.core.outcome import Outcome
from todeval.dialogue.episode import Termination

_VIOLATION_KINDS = (
    ("no tool call", "no_tool_call"),
    ("unknown tool", "unknown_tool"),
    ("not valid JSON", "invalid_json"),
    ("not a JSON object", "not_an_object"),
    ("schema violation", "schema"),
    ("empty follow-up", "empty_message"),
)
_TIME = re.compile(TIME_PATTERN)


def violation_kind(reason: str) -> str:
    for needle, kind in _VIOLATION_KINDS:
        if needle in reason:
            return kind
    return "other"


def classify(
    outcome: Outcome,
    termination: Termination,
    completed: bool,
    booked: dict[str, Any],
    task: BookingTask,
    violations: list[dict[str, Any]],
) -> str:
    if outcome is Outcome.SUCCESS:
        return "success"
    if outcome is Outcome.INFRASTRUCTURE_ERROR:
        return "infrastructure_error"
    if outcome is Outcome.USER_SIMULATOR_ERROR:
        return "user_simulator_failure"
    if outcome is Outcome.SYSTEM_ERROR:
        return "system_error"
    if outcome is Outcome.ABORTED:
        if violations:
            return "format_violation:" + violation_kind(str(violations[-1].get("reason", "")))
        return "inner_loop_cap"
    if termination is Termination.TURN_CAP:
        return "turn_cap"
    if completed and all(d in booked for d in task.domains):
        return "wrong_booking"
    return "no_booking"


def _realistic(key: str, value: str) -> bool:
    regular = slot_values("test")
    enums = {
        "area": regular.area,
        "pricerange": regular.pricerange,
        "type": regular.type,
        "internet": regular.internet,
        "parking": regular.parking,
        "stars": regular.stars,
        "day": regular.day,
        "people": regular.people,
        "stay": regular.stay,
    }
    if key in enums:
        return value in enums[key]
    if key in ("time", "leaveat", "arriveby"):
        return bool(_TIME.match(value))
    return False


def attempted_bookings(events: list[Any]) -> list[tuple[str, dict[str, str]]]:
    """(domain, arguments) of every booking the system attempted, valid or not."""
    out = []
    tools = dict(BOOKING_TOOLS)
    for e in events:
        data = e.data if hasattr(e, "data") else e.get("data", {})
        kind = e.kind if hasattr(e, "kind") else e.get("kind")
        if kind == "booking_request":
            out.append(
                (str(data["domain"]), {str(k): str(v) for k, v in data["arguments"].items()})
            )
        elif kind == "violation":
            raw = str(data.get("raw", ""))
            name, _, body = raw.partition("(")
            if name in tools and body.endswith(")"):
                try:
                    args = safejson.loads(body[:-1])
                except ValueError:
                    continue
                if isinstance(args, dict):
                    out.append((tools[name], {str(k): str(v) for k, v in args.items()}))
    return out


def unrealistic_class(task: BookingTask, failure_class: str, events: list[Any]) -> str:
    """repair / booked_nothing / other (or success) for an unrealistic-set episode."""
    if failure_class == "success":
        return "success"
    for domain, args in attempted_bookings(events):
        goal = task.domains.get(domain)
        if goal is None:
            continue
        wanted = {**goal.info, **goal.book}
        for raw_key, raw_value in args.items():
            key = normalise_key(raw_key)
            if key not in wanted:
                continue
            value = normalise_value(key, raw_value)
            if value != wanted[key] and _realistic(key, value) and not _realistic(key, wanted[key]):
                return "repair"
    gave_up = failure_class in ("no_booking", "turn_cap") or failure_class.startswith(
        "format_violation"
    )
    if gave_up and not attempted_bookings(events):
        return "booked_nothing"
    return "other"
