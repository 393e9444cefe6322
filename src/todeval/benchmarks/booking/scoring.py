"""Per-episode booking metrics (the clem:todd definitions).

* **Inform**: every informable slot of every goal domain equals the booked row's value, or the
  goal's ``fail_info`` value; a slot the world compares matches by its comparison (MultiWOZ:
  ``leaveat`` when the booked time is equal or later than the goal's, ``arriveby`` when equal or
  earlier; a pack's ``compare``).
* **Booking accuracy**: Inform, and every goal booking slot (people, day, time, stay) equals the
  booked value or the ``fail_book`` value.
* **Attributes**: every requested attribute was passed on in the booking. Not applicable (None,
  left out of the episode's metrics, so out of the mean and its n) when no goal domain requests
  an attribute: there is nothing to measure, and a free 1 would reward any system that does not
  abort (MultiWOZ's test and dev goals request none).

All three are 0 when the episode aborted or hit the turn cap (including a ``done`` on the 15th
turn, as in the original); attributes only where applicable.

Two readings of "booked", one per protocol: ``strict`` scores the booked **row** (what the
DB holds for the entity booked), and only a row the system committed to: a domain in which one
user turn saw bookings of two or more different rows scores neither Inform nor booking accuracy
(``several``; see :class:`~todeval.benchmarks.booking.rules.Strict`); ``clemtodd`` scores what
the original scores, the booking calls' own **arguments**, merged per domain over its successful
bookings (:func:`score_episode_from_calls`): a goal slot the calls never gave fails, even when
the row booked by name has the right value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from pydantic import BaseModel

from todeval.benchmarks.booking.environment import Booking
from todeval.benchmarks.booking.tasks import BookingTask, DomainGoal
from todeval.benchmarks.booking.world.of_task_set import world_of

_MULTIWOZ_COMPARE = {"leaveat": ">=", "arriveby": "<="}

_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")


def _minutes(value: str) -> int | None:
    m = _TIME.match(value.strip())
    if not m:
        return None
    return int(m.group(1)) * 60 + int(m.group(2))


def _ordered(booked: str, wanted: str) -> tuple[int, int] | None:
    """Two times in minutes, or two whole numbers; None when they are not of one kind."""
    times = _minutes(booked), _minutes(wanted)
    if times[0] is not None and times[1] is not None:
        return times[0], times[1]
    if booked.strip().isdigit() and wanted.strip().isdigit():
        return int(booked), int(wanted)
    return None


def slot_matches(
    key: str,
    booked: str | None,
    goal: str,
    fallback: str | None = None,
    operator: str | None = None,
) -> bool:
    """Does a booked value satisfy a goal value (or its fail_* fallback)? ``operator``: the
    comparison the goal value means (default MultiWOZ's: ``leaveat`` ``>=``, ``arriveby``
    ``<=``, anything else ``=``)."""
    if booked is None:
        return False
    compare = _MULTIWOZ_COMPARE.get(key, "=") if operator is None else operator
    for wanted in (goal, fallback):
        if wanted is None:
            continue
        if booked == wanted:
            return True
        pair = _ordered(booked, wanted) if compare in (">=", "<=") else None
        if pair is not None and (pair[0] >= pair[1] if compare == ">=" else pair[0] <= pair[1]):
            return True
    return False


class DomainScore(BaseModel):
    inform: bool
    booked: bool
    attributes: bool
    mismatches: list[str]


def score_domain(
    goal: DomainGoal, booking: Booking | None, compare: Mapping[str, str] | None = None
) -> DomainScore:
    """One domain's scores; ``compare``: slot -> the comparison its goal value means (default
    MultiWOZ's)."""
    means = _means(compare)
    if booking is None:
        return DomainScore(
            inform=False, booked=False, attributes=not goal.reqt, mismatches=["no booking"]
        )
    mismatches = []
    for key, value in goal.info.items():
        booked = booking.info.get(key, booking.arguments.get(key))
        if not slot_matches(key, booked, value, goal.fail_info.get(key), means(key)):
            mismatches.append(f"info.{key}: wanted {value!r}, booked {booked!r}")
    inform = not mismatches
    book_ok = inform
    for key, value in goal.book.items():
        booked = booking.book.get(key)
        if not slot_matches(key, booked, value, goal.fail_book.get(key), means(key)):
            mismatches.append(f"book.{key}: wanted {value!r}, booked {booked!r}")
            book_ok = False
    attributes = all(k in booking.reqt for k in goal.reqt)
    return DomainScore(inform=inform, booked=book_ok, attributes=attributes, mismatches=mismatches)


class EpisodeScore(BaseModel):
    inform: float
    booking_accuracy: float
    attributes: float | None = None
    """None when no goal domain requests an attribute (not applicable)."""
    domains: dict[str, DomainScore]


def score_episode(
    task: BookingTask,
    bookings: dict[str, Booking],
    completed: bool,
    *,
    several: Collection[str] = (),
) -> EpisodeScore:
    """Scores of one episode; ``completed`` is False after an abort or the turn cap;
    ``several``: domains in which one user turn booked different rows (not credited)."""
    compare = world_of(task.task_set).compare
    domains = {
        d: score_domain(g, bookings.get(d), compare.get(d, {})) for d, g in task.domains.items()
    }
    for d in set(several) & set(domains):
        found = domains[d]
        domains[d] = found.model_copy(
            update={
                "inform": False,
                "booked": False,
                "mismatches": [*found.mismatches, "different rows booked within one user turn"],
            }
        )
    return _episode(task, domains, completed)


def _episode(task: BookingTask, domains: dict[str, DomainScore], completed: bool) -> EpisodeScore:
    requested = any(g.reqt for g in task.domains.values())
    if not completed:
        return EpisodeScore(
            inform=0.0,
            booking_accuracy=0.0,
            attributes=0.0 if requested else None,
            domains=domains,
        )
    return EpisodeScore(
        inform=float(all(s.inform for s in domains.values())),
        booking_accuracy=float(all(s.booked for s in domains.values())),
        attributes=float(all(s.attributes for s in domains.values())) if requested else None,
        domains=domains,
    )


def _means(compare: Mapping[str, str] | None) -> Callable[[str], str | None]:
    if compare is None:
        return lambda key: None
    return lambda key: compare.get(key, "=")


def score_domain_from_calls(
    goal: DomainGoal, generated: dict[str, str] | None, compare: Mapping[str, str] | None = None
) -> DomainScore:
    """One domain under the original's rule: the goal's slots against the calls' arguments."""
    means = _means(compare)
    if generated is None:
        return DomainScore(
            inform=False, booked=False, attributes=not goal.reqt, mismatches=["no booking"]
        )
    mismatches = []
    for key, value in goal.info.items():
        given = generated.get(key)
        if not slot_matches(key, given, value, goal.fail_info.get(key), means(key)):
            mismatches.append(f"info.{key}: wanted {value!r}, the booking calls gave {given!r}")
    inform = not mismatches
    book_ok = inform
    for key, value in goal.book.items():
        given = generated.get(key)
        if not slot_matches(key, given, value, goal.fail_book.get(key), means(key)):
            mismatches.append(f"book.{key}: wanted {value!r}, the booking calls gave {given!r}")
            book_ok = False
    attributes = all(k in generated for k in goal.reqt)
    return DomainScore(inform=inform, booked=book_ok, attributes=attributes, mismatches=mismatches)


def score_episode_from_calls(
    task: BookingTask, generated: dict[str, dict[str, str]], completed: bool
) -> EpisodeScore:
    """Scores of one episode from the booking calls' merged arguments (``clemtodd``)."""
    compare = world_of(task.task_set).compare
    domains = {
        d: score_domain_from_calls(g, generated.get(d), compare.get(d, {}))
        for d, g in task.domains.items()
    }
    return _episode(task, domains, completed)
