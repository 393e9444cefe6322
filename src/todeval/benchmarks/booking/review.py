"""Who failed: a rule-based review of a booking episode (issue 30, first part).

Every failed episode is read against its goal -- with the scorer's own value normaliser
(:func:`~todeval.benchmarks.booking.tasks.normalise_value`) -- for faults of each side:

simulator (the user under the goal)
  ``contradicts_goal``   it stated a value for a slot its goal constrains to something else
  ``not_in_goal``        it stated a constraint its goal does not have (area, price, type, stars)
  ``withheld_value``     the system asked for a value the goal holds (people, day, nights, time;
                         a constraint or a booking slot) and the user never gave it
  ``early_done``         it ended the dialogue with a goal domain unbooked before giving every
                         booking value that domain needs
  ``simulator_error``    the simulator crashed

system (the agent under test; side ``agent``)
  ``ignored_constraint`` a search or booking whose argument contradicts a value the user stated
  ``missing_slots``      a booking without a booking slot the user had already given
  ``invented_reference`` a reference in its messages that no successful booking returned
  ``gave_up``            the user gave every value a goal domain needs, and it was not booked;
                         or it refused a booking outright ("I cannot book that.") and a goal
                         domain stayed unbooked
  ``format_violation``, ``system_error`` -- the episode was aborted or crashed on its side

The verdict of a failed episode is ``agent`` (the system), ``simulator``, ``both`` or
``unclear`` (no fault found); a successful one is ``none``. Each fault names its turn and the
text that shows it. The review reads only the record (events, details) and the shipped task,
so old run directories are reviewed without re-running them: ``todeval review RUN_DIR``
(models and verdicts: :mod:`todeval.review`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from todeval.benchmarks.booking.domains.language import (
    entity_mentioned,
    pack_of,
    read_slot,
    shared_values,
)
from todeval.benchmarks.booking.scoring import slot_matches
from todeval.benchmarks.booking.tasks import BookingTask, normalise_value
from todeval.benchmarks.booking.worlds import world_of
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Manifest
from todeval.errors import BadInputError
from todeval.review import VERDICTS, Fault, Review, Reviewer, review_of

SIMULATOR_FAULTS = (
    "contradicts_goal", "not_in_goal", "withheld_value", "early_done", "simulator_error",
)  # fmt: skip
AGENT_FAULTS = (
    "ignored_constraint", "missing_slots", "invented_reference", "gave_up", "format_violation",
    "system_error",
)  # fmt: skip
SYSTEM_FAULTS = AGENT_FAULTS


_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "a single": "1", "just me": "1", "myself": "1",
}  # fmt: skip
_NUM = r"(\d{1,2}|" + "|".join(_WORDS) + r")"
_PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "people": [
        re.compile(_NUM + r"\s+(?:people|persons?|guests?|adults?|of us|ppl|tickets?|seats?)\b"),
        re.compile(r"\b(?:group|party|table|family) of " + _NUM + r"\b"),
    ],
    "stay": [re.compile(_NUM + r"\s+(?:nights?|days? stay)\b")],
    "stars": [re.compile(_NUM + r"[- ]stars?\b")],
    "day": [
        re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"),
    ],
    "pricerange": [re.compile(r"\b(cheap|moderate(?:ly)?|expensive)\b")],
    "area": [re.compile(r"\b(?:in|the|of) (north|south|east|west|centre|center)\b")],
    # "a hotel" is how people ask for any place to stay; only "guest house" names the type
    "type": [re.compile(r"\b(guest ?house)s?\b")],
}
_NEGATED = re.compile(r"\b(?:not|no|rather than|instead of|other than|n't)\b[^.,;]*$")
_STATED_ONLY = ("pricerange", "area", "type", "stars")  # 'not in goal' is checked for these
_ASKS = {
    "people": re.compile(r"how many (?:people|persons|guests)|number of (?:people|guests)"),
    "day": re.compile(r"which day|what day|day (?:would|will|do)"),
    "stay": re.compile(r"how many nights|how long"),
    "time": re.compile(r"what time|which time"),
}
_REFUSAL = re.compile(
    r"\b(?:cannot|can't|can not|unable to|am not able to)\s+(?:make\s+)?(?:book|reserve)\s+"
    r"(?:that|this|it|the booking|anything)\b"
)
"""A system turn refusing a booking outright ("I cannot book that."), as opposed to refusing a
value ("I can't book for 12 people.")."""
_REFERENCE = re.compile(
    r"\b(?:reference|ref\.?)(?: number| code)?(?: is)?:?\s*#?([A-Z0-9]{6,10})\b"
)


def _value(slot: str, raw: str) -> str:
    raw = _WORDS.get(raw, raw)
    if slot == "pricerange" and raw.startswith("moderate"):
        raw = "moderate"
    if slot == "area" and raw == "center":
        raw = "centre"
    if slot == "type":
        raw = "guesthouse" if raw.replace(" ", "") == "guesthouse" else "hotel"
    return normalise_value(slot, raw)


def mentions(text: str, names: Iterable[str] = ()) -> dict[str, set[str]]:
    """Slot values a message states (names of venues are cut out first: "city centre north b
    and b" names a hotel, not an area)."""
    low = text.lower()
    for name in sorted(names, key=len, reverse=True):
        if name:
            low = low.replace(name.lower(), " ")
    found: dict[str, set[str]] = {}
    for slot, patterns in _PATTERNS.items():
        for pattern in patterns:
            for m in pattern.finditer(low):
                if _NEGATED.search(low[max(0, m.start() - 16) : m.start()]):
                    continue  # "a hotel, not a guesthouse": the opposite of a statement
                found.setdefault(slot, set()).add(_value(slot, m.group(1)))
    return found


@dataclass(frozen=True)
class _Language:
    """How the review reads a task's dialogue: the values a user message states, the slots a
    stated value outside the goal is a fault for, the booking slots a user must give, and the
    system's questions for them."""

    read: Callable[[str, set[str]], dict[str, set[str]]]
    stated_only: frozenset[str]
    booking: Callable[[str], tuple[str, ...]]
    asks: Mapping[str, re.Pattern[str]]
    normalise: Callable[[str, Any], str] = normalise_value
    reached: Callable[[str], bool] = lambda domain: True
    """whether the user got to a goal domain (one it never got to cannot have ended early)"""


_MULTIWOZ = _Language(
    read=mentions,
    stated_only=frozenset(_STATED_ONLY),
    booking=lambda domain: ("people", "day", "stay"),
    asks=_ASKS,
)


def _pack_language(task: BookingTask) -> _Language:
    """A domain pack's reading (:mod:`.domains.language`, as its rule system reads): a message
    is about the entity it names, else the one talked about last; the slots of that entity."""
    pack = pack_of(task.task_set)
    current = [next(iter(task.domains))]
    talked_about = {current[0]}

    keys = {str(r[e.key]) for d in task.domains for e in [pack.entities[d]] for r in pack.rows[d]}

    def read(text: str, names: set[str]) -> dict[str, set[str]]:
        unnamed = text.lower()
        for name in sorted(keys | names, key=len, reverse=True):
            if len(name) > 3:  # "victoria square car park" names a car park, not a car
                unnamed = unnamed.replace(name.lower(), " ")
        mentioned = entity_mentioned(pack, unnamed)
        if mentioned in task.domains:
            current[0] = mentioned
            talked_about.add(mentioned)
        entity = pack.entities[current[0]]
        goal = task.domains[current[0]]
        shared = shared_values(entity)
        found: dict[str, set[str]] = {}
        for name, slot in {**entity.slots, **entity.booking}.items():
            known = [p[name] for p in (goal.info, goal.fail_info) if name in p]
            if slot.type == "text":  # a name is read where it is said
                value = read_slot(slot, text, known, shared)
            else:  # a value inside a name ("station square car park") is no value
                value = read_slot(slot, unnamed, (), shared)
            if value is not None:
                found.setdefault(name, set()).add(value)
        return found

    entities = [pack.entities[d] for d in task.domains if d in pack.entities]
    asks = {
        name: re.compile(r"\btell me\b[^.?!]*\b" + re.escape(slot.description.lower()))
        for e in entities
        for name, slot in e.booking.items()
    }
    return _Language(
        read=read,
        stated_only=frozenset(
            n for e in entities for n, s in e.slots.items() if s.type == "categorical"
        ),
        booking=lambda domain: tuple(pack.entities[domain].booking),
        asks=asks,
        normalise=world_of(task.task_set).normalise_value,
        reached=lambda domain: domain in talked_about,
    )


def _language(task: BookingTask) -> _Language:
    return _pack_language(task) if world_of(task.task_set).from_pack else _MULTIWOZ


def _goal_values(
    task: BookingTask,
    slot: str,
    domain: str | None = None,
    normalise: Callable[[str, Any], str] = normalise_value,
) -> set[str] | None:
    """Every value the goal allows for ``slot`` (info, fail_info, book, fail_book of every
    domain, or of ``domain``); None when none constrains it; ``dontcare`` allows anything."""
    values: set[str] = set()
    for name, goal in task.domains.items():
        if domain is not None and name != domain:
            continue
        for part in (goal.info, goal.fail_info, goal.book, goal.fail_book):
            if slot in part:
                values.add(normalise(slot, part[slot]))
    return values or None


def _names(task: BookingTask, events: list[Any]) -> set[str]:
    names = {str(g.info.get("name", "")) for g in task.domains.values()}
    for e in events:
        for row in e.data.get("rows", []) if e.kind == "db_result" else []:
            names.add(str(row.get("name", "")))
    return {n for n in names if n}


def _booked(events: list[Any]) -> set[str]:
    return {
        str(e.data.get("domain")) for e in events if e.kind == "booking_result" and e.data.get("ok")
    }


def review_episode(task: BookingTask, record: EpisodeRecord) -> Review:
    """The review of one episode (see the module)."""
    language = _language(task)
    events = list(record.events)
    faults: list[Fault] = []
    names = _names(task, events)
    stated: dict[str, set[str]] = {}  # slot -> the goal values the user stated for it
    said: dict[str, set[str]] = {}  # slot -> every value the user stated (goal or not)
    asked: list[tuple[str, int, str]] = []  # (slot, turn, system text) asked for
    refusals: list[tuple[int, str]] = []  # (turn, system text) refusing a booking outright
    references = {
        str(e.data.get("reference"))
        for e in events
        if e.kind == "booking_result" and e.data.get("ok")
    }
    for e in events:
        if e.kind == "user_message":
            text = str(e.data.get("text", ""))
            for slot, values in language.read(text, names).items():
                said.setdefault(slot, set()).update(values)
                allowed = _goal_values(task, slot, normalise=language.normalise)
                for value in sorted(values):
                    if allowed is None:
                        if slot in language.stated_only:
                            faults.append(
                                Fault(
                                    side="simulator", kind="not_in_goal", turn=e.turn, evidence=text
                                )
                            )
                        continue
                    if "dontcare" in allowed or value in allowed:
                        stated.setdefault(slot, set()).add(value)
                    else:
                        faults.append(
                            Fault(
                                side="simulator",
                                kind="contradicts_goal",
                                turn=e.turn,
                                evidence=text,
                            )
                        )
        elif e.kind == "system_message":
            text = str(e.data.get("text", ""))
            for slot, pattern in language.asks.items():
                if pattern.search(text.lower()):
                    asked.append((slot, e.turn, text))
            if _REFUSAL.search(text.lower()):
                refusals.append((e.turn, text))
            for ref in _REFERENCE.findall(text):
                if ref not in references:
                    faults.append(
                        Fault(side="agent", kind="invented_reference", turn=e.turn, evidence=text)
                    )
        elif e.kind in ("db_query", "booking_request"):
            faults += _call_faults(task, e, stated, said, language)
    if record.outcome is not Outcome.SUCCESS:
        faults += _unbooked(task, record, events, stated, asked, language)
        faults += _refused(task, events, refusals)
        faults += _ending(record)
    return review_of(record, faults)


def _call_faults(
    task: BookingTask,
    event: Any,
    stated: dict[str, set[str]],
    said: dict[str, set[str]],
    language: _Language = _MULTIWOZ,
) -> list[Fault]:
    """A search or booking in a domain that drops or contradicts what the user said of it: an
    argument outside the domain's goal values where the user had stated one of them (a value
    the user itself asked for is the user's doing, not the system's)."""
    args = event.data.get("arguments") or {}
    domain = str(event.data.get("domain"))
    if not isinstance(args, dict) or domain not in task.domains:
        return []
    out = []
    for slot, values in stated.items():
        allowed = _goal_values(task, slot, domain, language.normalise)
        told = values & allowed if allowed else set()
        if not told or (allowed and "dontcare" in allowed):
            continue
        given = args.get(slot)
        if isinstance(given, dict):  # a search operator: {"operator": "=", "value": ...}
            given = given.get("value")
        if given is None:
            if event.kind == "booking_request" and slot in language.booking(domain):
                call = (
                    f"booking_request {domain} without {slot} (user said {', '.join(sorted(said))})"
                )
                out.append(
                    Fault(side="agent", kind="missing_slots", turn=event.turn, evidence=call)
                )
            continue
        value = language.normalise(slot, given)
        followed = value in said.get(slot, set())
        if not followed and not any(slot_matches(slot, value, v) for v in allowed or ()):
            call = f"{event.kind} {domain}: {slot}={given} (user said {', '.join(sorted(told))})"
            out.append(
                Fault(side="agent", kind="ignored_constraint", turn=event.turn, evidence=call)
            )
    return out


def _unbooked(
    task: BookingTask,
    record: EpisodeRecord,
    events: list[Any],
    stated: dict[str, set[str]],
    asked: list[tuple[str, int, str]],
    language: _Language = _MULTIWOZ,
) -> list[Fault]:
    """Faults about goal domains left without a booking, and values the system asked for that
    the goal holds (as a constraint or a booking slot) and the user never gave."""
    out: list[Fault] = []
    for slot, turn, text in asked:
        held = _goal_values(task, slot, normalise=language.normalise)
        if held and "dontcare" not in held and not stated.get(slot, set()) & held:
            out.append(Fault(side="simulator", kind="withheld_value", turn=turn, evidence=text))
    booked = _booked(events)
    last = max((e.turn for e in events), default=0)
    for domain, goal in task.domains.items():
        needed = [s for s in (goal.book or goal.fail_book) if s in language.booking(domain)]
        if not (goal.book or goal.fail_book) or domain in booked:
            continue
        missing = [
            s
            for s in needed
            if not stated.get(s, set())
            & (_goal_values(task, s, domain, language.normalise) or set())
        ]
        if missing and record.termination == "done" and language.reached(domain):
            said = f"{domain} unbooked; never given: {', '.join(missing)}"
            out.append(Fault(side="simulator", kind="early_done", turn=last, evidence=said))
        elif not missing and record.outcome is Outcome.FAILURE:
            given = ", ".join(f"{s}={'/'.join(sorted(stated[s]))}" for s in needed)
            said = f"{domain} unbooked although the user gave {given or 'what it needs'}"
            out.append(Fault(side="agent", kind="gave_up", turn=last, evidence=said))
    return out


def _refused(task: BookingTask, events: list[Any], refusals: list[tuple[int, str]]) -> list[Fault]:
    """A system that said outright it would not book, with a goal domain left unbooked, gave up
    (whatever the user had or had not given by then)."""
    booked = _booked(events)
    wanted = [d for d, g in task.domains.items() if (g.book or g.fail_book) and d not in booked]
    if not wanted or not refusals:
        return []
    turn, text = refusals[0]
    return [Fault(side="agent", kind="gave_up", turn=turn, evidence=text)]


def _ending(record: EpisodeRecord) -> list[Fault]:
    reason = record.reason or ""
    turn = record.turns
    if record.outcome is Outcome.USER_SIMULATOR_ERROR:
        return [Fault(side="simulator", kind="simulator_error", turn=turn, evidence=reason)]
    if record.outcome is Outcome.SYSTEM_ERROR:
        return [Fault(side="agent", kind="system_error", turn=turn, evidence=reason)]
    if record.termination == "format_violation":
        return [Fault(side="agent", kind="format_violation", turn=turn, evidence=reason)]
    return []


def _tasks(manifest: Manifest) -> tuple[str, dict[str, BookingTask]]:
    """The run's task set (its name) and its tasks by id: a built-in set, or a domain pack's."""
    from todeval.benchmarks.booking.run import BookingConfig, run_tasks

    known = {k: v for k, v in manifest.config.items() if k in BookingConfig.model_fields}
    try:
        config = BookingConfig.model_validate(known)
    except ValidationError as exc:
        raise BadInputError(f"not a booking run's config ({exc.errors()[0]['msg']})") from None
    name = config.task_set if config.domain is None else config.domain
    return name, {t.task_id: t for t in run_tasks(config)}


def review_run(manifest: Manifest, records: Iterable[EpisodeRecord]) -> Iterator[Review]:
    """Every record of one booking run, reviewed against the run's task set."""
    task_set, tasks = _tasks(manifest)
    for record in records:
        task = tasks.get(record.task_id)
        if task is None:
            raise BadInputError(f"task {record.task_id} is not in the {task_set} set")
        yield review_episode(task, record)


def briefs(manifest: Manifest, records: Sequence[EpisodeRecord]) -> dict[str, str]:
    """For the LLM reviewer: each episode's goal, as the user simulator was given it."""
    _, tasks = _tasks(manifest)
    out = {}
    for record in records:
        task = tasks.get(record.task_id)
        if task is not None:
            out[record.episode_id] = (
                f"The user simulator's goal: {task.message} The system had to find what the "
                "goal asks for, give the requested information, and book what it asks to book."
            )
    return out


REVIEWER = Reviewer(
    benchmark="booking",
    agent="system",
    simulator="user simulator",
    review=review_run,
    briefs=briefs,
    simulator_role="user",
)
"""``todeval review`` of booking runs (registered in the package)."""


__all__ = [
    "AGENT_FAULTS",
    "REVIEWER",
    "SIMULATOR_FAULTS",
    "SYSTEM_FAULTS",
    "VERDICTS",
    "Fault",
    "Review",
    "mentions",
    "review_episode",
    "review_run",
]
