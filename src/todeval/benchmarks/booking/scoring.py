"""Per-episode booking metrics (the clem:todd definitions).

* **Inform**: every informable slot of every goal domain equals the booked row's value, or the
  goal's ``fail_info`` value; ``leaveat`` matches when the booked time is equal or later than the
  goal's, ``arriveby`` when equal or earlier.
* **Booking accuracy**: Inform, and every goal booking slot (people, day, time, stay) equals the
  booked value or the ``fail_book`` value.
* **Attributes**: every requested attribute was passed on in the booking (1 when none requested).

All three are 0 when the episode aborted or hit the turn cap (including a ``done`` on the 15th
turn, as in the original).

Two readings of "booked", one per protocol: ``strict`` scores the booked **row** (what the
DB holds for the entity booked); ``clemtodd`` scores what the original scores, the booking
calls' own **arguments**, merged per domain over its successful bookings
(:func:`score_episode_from_calls`): a goal slot the calls never gave fails, even when the row
booked by name has the right value.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from todeval.benchmarks.booking.environment import Booking
from todeval.benchmarks.booking.tasks import BookingTask, DomainGoal

_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")


def _minutes(value: str) -> int | None:
    m = _TIME.match(value.strip())
    if not m:
        return None
    return int(m.group(1)) * 60 + int(m.group(2))


def slot_matches(key: str, booked: str | None, goal: str, fallback: str | None = None) -> bool:
    """Does a booked value satisfy a goal value (or its fail_* fallback)?"""
    if booked is None:
        return False
    for wanted in (goal, fallback):
        if wanted is None:
            continue
        if booked == wanted:
            return True
        if key in ("leaveat", "arriveby"):
            b, w = _minutes(booked), _minutes(wanted)
            if b is not None and w is not None and (b >= w if key == "leaveat" else b <= w):
                return True
    return False


class DomainScore(BaseModel):
    inform: bool
    booked: bool
    attributes: bool
    mismatches: list[str]


def score_domain(goal: DomainGoal, booking: Booking | None) -> DomainScore:
    if booking is None:
        return DomainScore(
            inform=False, booked=False, attributes=not goal.reqt, mismatches=["no booking"]
        )
    mismatches = []
    for key, value in goal.info.items():
        booked = booking.info.get(key, booking.arguments.get(key))
        if not slot_matches(key, booked, value, goal.fail_info.get(key)):
            mismatches.append(f"info.{key}: wanted {value!r}, booked {booked!r}")
    inform = not mismatches
    book_ok = inform
    for key, value in goal.book.items():
        booked = booking.book.get(key)
        if not slot_matches(key, booked, value, goal.fail_book.get(key)):
            mismatches.append(f"book.{key}: wanted {value!r}, booked {booked!r}")
            book_ok = False
    attributes = all(k in booking.reqt for k in goal.reqt)
    return DomainScore(inform=inform, booked=book_ok, attributes=attributes, mismatches=mismatches)


class EpisodeScore(BaseModel):
    inform: float
    booking_accuracy: float
    attributes: float
    domains: dict[str, DomainScore]


def score_episode(task: BookingTask, bookings: dict[str, Booking], completed: bool) -> EpisodeScore:
    """Scores of one episode; ``completed`` is False after an abort or the turn cap."""
    domains = {d: score_domain(g, bookings.get(d)) for d, g in task.domains.items()}
    return _episode(domains, completed)


def _episode(domains: dict[str, DomainScore], completed: bool) -> EpisodeScore:
    if not completed:
        return EpisodeScore(inform=0.0, booking_accuracy=0.0, attributes=0.0, domains=domains)
    return EpisodeScore(
        inform=float(all(s.inform for s in domains.values())),
        booking_accuracy=float(all(s.booked for s in domains.values())),
        attributes=float(all(s.attributes for s in domains.values())),
        domains=domains,
    )


def score_domain_from_calls(goal: DomainGoal, generated: dict[str, str] | None) -> DomainScore:
    """One domain under the original's rule: the goal's slots against the calls' arguments."""
    if generated is None:
        return DomainScore(
            inform=False, booked=False, attributes=not goal.reqt, mismatches=["no booking"]
        )
    mismatches = []
    for key, value in goal.info.items():
        given = generated.get(key)
        if not slot_matches(key, given, value, goal.fail_info.get(key)):
            mismatches.append(f"info.{key}: wanted {value!r}, the booking calls gave {given!r}")
    inform = not mismatches
    book_ok = inform
    for key, value in goal.book.items():
        given = generated.get(key)
        if not slot_matches(key, given, value, goal.fail_book.get(key)):
            mismatches.append(f"book.{key}: wanted {value!r}, the booking calls gave {given!r}")
            book_ok = False
    attributes = all(k in generated for k in goal.reqt)
    return DomainScore(inform=inform, booked=book_ok, attributes=attributes, mismatches=mismatches)


def score_episode_from_calls(
    task: BookingTask, generated: dict[str, dict[str, str]], completed: bool
) -> EpisodeScore:
    """Scores of one episode from the booking calls' merged arguments (``clemtodd``)."""
    domains = {d: score_domain_from_calls(g, generated.get(d)) for d, g in task.domains.items()}
    return _episode(domains, completed)
