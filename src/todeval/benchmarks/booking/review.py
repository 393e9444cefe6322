"""Who failed: a rule-based review of a booking episode (issue 30, first part).

Every failed episode is read against its goal -- with the scorer's own value normaliser
(:func:`~todeval.benchmarks.booking.tasks.normalise_value`) -- for faults of each side:

simulator (the user under the goal)
  ``contradicts_goal``   it stated a value for a slot its goal constrains to something else
  ``not_in_goal``        it stated a constraint its goal does not have (area, price, type, stars;
                         on a pack, also an entity its goal does not have)
  ``withheld_value``     the system asked for a value the goal holds (people, day, nights, time;
                         a constraint or a booking slot) for a domain left unbooked and the user
                         never gave it (a question naming its domain -- "how many tickets" -- is
                         answered only by what the user says after it)
  ``early_done``         it ended the dialogue with a goal domain unbooked before giving every
                         booking value that domain needs
  ``simulator_error``    the simulator crashed

  Once the system refuses a booking outright, the questions it asked before and the user's
  ending are not the user's faults; once it leaves unbooked a domain the user gave everything
  for, a stated value it never used is not either (the held-out study of issue 42).

  A simulator fault the review cannot verify with certainty (``_verify``: a value not acted on,
  said ambiguously or for a goal value outside the schema's vocabulary; a value that may have
  been given in words the patterns do not read; a question about another domain) is listed
  with its evidence prefixed :data:`UNVERIFIED` and does not count toward the verdict; nor does
  a verified statement outside the goal seen to have cost nothing (``_costly``: taken back,
  booked over by the system, or an extra constraint a venue of the goal meets), prefixed
  :data:`NO_EFFECT` (the sixth held-out set).

system (the agent under test; side ``agent``)
  ``ignored_constraint`` a search or booking whose argument contradicts a value the user stated,
                         or a booking that leaves out a constraint the user stated
  ``missing_slots``      a booking without a booking slot the user had already given, or one
                         that failed for a slot of the system's own (a venue's name, a car id)
  ``invented_reference`` a reference in its messages that no successful booking returned
  ``gave_up``            the user gave every value a goal domain needs, and it was not booked
                         (unless its last search there found nothing and it tried no booking);
                         or it refused a booking outright ("I cannot book that.") and a goal
                         domain stayed unbooked
  ``format_violation``, ``system_error`` -- the episode was aborted or crashed on its side

The verdict of a failed episode is ``agent`` (the system), ``simulator``, ``both`` or
``unclear`` (no verified fault); a successful one is ``none``. Each fault names its turn and the
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
from todeval.benchmarks.booking.world.of_task_set import world_of
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
        re.compile(r"\b(?:group|party|table|family) (?:of|to|is) " + _NUM + r"\b"),
        # "a table for 4 on Saturday", "a reservation for 7 at 13:00" (not "for 3 nights")
        re.compile(
            r"\b(?:table|reservation|booking|seats?|tickets?|rooms?) for "
            + _NUM
            + r"\b(?!\s*(?:nights?|days?|o'?clock|[:.]\d|am\b|pm\b))"
        ),
    ],
    "stay": [re.compile(_NUM + r"\s+(?:nights?|days? stay)\b")],
    "stars": [re.compile(_NUM + r"[- ]stars?\b")],
    "day": [
        re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"),
    ],
    "pricerange": [
        re.compile(r"\b(cheap|moderate(?:ly)?|expensive)\b"),
        re.compile(
            r"\b(mid-?priced|mid-?range|reasonably priced|pricey|posh|upmarket|high[- ]end|"
            r"upscale|inexpensive|budget)\b"
        ),
    ],
    "area": [re.compile(r"\b(?:in|the|of) (north|south|east|west|centre|center)\b")],
    # "a hotel" is how people ask for any place to stay; only "guest house" names the type
    "type": [re.compile(r"\b(guest ?house)s?\b")],
    "parking": [re.compile(r"\b(?:free |with |has |have )(parking)\b")],
    "internet": [re.compile(r"\b(?:free |with |has |have )(wifi|wi-fi|internet)\b")],
}
_HOURS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_HOUR = r"(\d{1,2}|" + "|".join(_HOURS) + r")"
_PART = r"(?:\s*(am|pm|a\.m\.|p\.m\.)|\s+in the (morning|afternoon|evening)|\s+at night)?"
_TIMES = [  # a clock time said in words or digits; the groups give hour, minutes, part of day
    re.compile(r"\b(\d{1,2})[:.](\d{2})" + _PART),
    re.compile(r"\b(quarter past|half past|quarter to) " + _HOUR + _PART),
    re.compile(r"\b" + _HOUR + r"(?: o'?clock)" + _PART),
    re.compile(r"\b" + _HOUR + r"(?:\s*(am|pm)|\s+in the (morning|afternoon|evening))\b"),
    re.compile(r"\bat (\d{2})(\d{2})\b"),
]
_ARRIVE = re.compile(r"(?:arriv\w*|get(?:ting)? (?:there|in)|be there)\b[^.,;!?]{0,20}$|\bby $")
_LEAVE = re.compile(r"(?:leav\w*|depart\w*)\b[^.,;!?]{0,20}$|\bafter $")
_PART_OF_NUMBER = re.compile(r"[./^]\d")
_GLUED = re.compile(r"[\w./^-]$")
_SAME = re.compile(r"\bsame (?:group|party|people|number of people|\w+ (?:people|persons?))\b")
_SAME_DAY = re.compile(r"\bsame day\b")
_PRICE_WORDS = {
    "moderately": "moderate", "midpriced": "moderate", "midrange": "moderate",
    "reasonablypriced": "moderate", "pricey": "expensive", "posh": "expensive",
    "upmarket": "expensive", "highend": "expensive", "upscale": "expensive",
    "inexpensive": "cheap", "budget": "cheap",
}  # fmt: skip
_TIME_SLOTS = ("time", "arriveby", "leaveat")
_GOAL_WORDS = {
    "food": r"\b{}\b",
    "departure": r"\b(?:from|leaving|leave|departing|depart)\s+(?:from\s+)?{}\b",
    "destination": r"\b(?:to|into|towards|arriv\w*(?: at| in)?|get(?:ting)? (?:to|into))\s+{}\b",
}
"""Free-text slots read where the user says the goal's own value ("indian", "from
broxbourne"): enough to see it given, never to judge it (a value outside the goal is not looked
for, so a search with another value may be one the user asked for)."""
_NEGATED = re.compile(r"\b(?:not|no|without|rather than|instead of|other than|n't)\b[^.,;]*$")
_STATED_ONLY = ("pricerange", "area", "type", "stars")  # 'not in goal' is checked for these
_UNCHECKED = ("time",)
"""Slots read only to see a value given, never against the goal: "at 17:01" may be a train's
time in a message about a restaurant's goal."""
_ASKS = {
    "people": re.compile(
        r"how many (?:people|persons|guests|tickets|seats)|number of (?:people|guests|tickets)"
    ),
    "day": re.compile(r"which day|what day|day (?:would|will|do)"),
    "stay": re.compile(r"how many nights|how long"),
    "time": re.compile(r"what time|which time"),
}
_ASK_CUES = {
    "train": re.compile(r"\btickets?\b"),
    "restaurant": re.compile(r"\btable\b"),
    "hotel": re.compile(r"\b(?:will stay|nights?)\b"),
}
"""The domain a question for a booking value is about, by its words."""
_REFUSAL = re.compile(
    r"\b(?:cannot|can't|can not|unable to|(?:am )?not able to)\s+(?:make|complete|process|book|"
    r"reserve)\s+(?:that|this|it|anything|(?:the|your|a|that|this) (?:booking|reservation))\b"
    r"(?!\s+(?:without|unless|until|before|on|at)\b|\s+for\s+(?!(?:you|us|me)\b))"
    r"|\b(?:booking|reservation) (?:could not|couldn't|cannot|can't) be (?:made|completed)\b"
)
"""A system turn refusing a booking outright ("I cannot book that.", "I'm afraid I can't make
that reservation.", "the booking could not be made", "I am not able to book that for you"), as
opposed to refusing a value ("I can't book for 12 people.", "I cannot make a booking without the
number of people.")."""
_REFERENCE = re.compile(
    r"\b(?:reference|ref\.?)(?: number| code)?(?: is)?:?\s*#?([A-Z0-9]{6,10})\b"
)


def _value(slot: str, raw: str) -> str:
    raw = _WORDS.get(raw, raw)
    if slot == "pricerange":
        raw = _PRICE_WORDS.get(raw.replace("-", "").replace(" ", ""), raw)
    if slot == "area" and raw == "center":
        raw = "centre"
    if slot == "type":
        raw = "guesthouse" if raw.replace(" ", "") == "guesthouse" else "hotel"
    if slot in ("parking", "internet"):
        raw = "yes"
    return normalise_value(slot, raw)


def _clock(m: re.Match[str]) -> tuple[str, int, int] | None:
    """(slot-free) HH:MM of a :data:`_TIMES` match, or None if it is no clock time."""
    groups = [g for g in m.groups()]
    if groups[0] in ("quarter past", "half past", "quarter to"):
        hour = int(_HOURS.get(groups[1], groups[1]) if groups[1] else 0)
        minute = {"quarter past": 15, "half past": 30, "quarter to": -15}[groups[0]]
        part = groups[2] or groups[3]
        if minute < 0:
            hour, minute = hour - 1, 45
    else:
        hour = int(_HOURS.get(groups[0], groups[0]))
        minute = int(groups[1]) if len(groups) > 1 and groups[1] and groups[1].isdigit() else 0
        part = next((g for g in groups[1:] if g and not g.isdigit()), None)
    part = part or ("night" if m.group(0).endswith("night") else None)
    if part in ("pm", "p.m.", "afternoon", "evening", "night") and hour < 12:
        hour += 12
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    return f"{hour:02d}:{minute:02d}", m.start(), m.end()


def _readings(m: re.Match[str], value: str) -> set[str]:
    """A clock time and, said without a part of day ("by 3:00"), its afternoon reading too."""
    hour = int(value[:2])
    plain = not re.search(r"am|pm|a\.m|p\.m|morning|afternoon|evening|night", m.group(0))
    if plain and 1 <= hour <= 11 and not m.group(0).startswith("0"):
        return {value, f"{hour + 12:02d}{value[2:]}"}
    return {value}


def times(text: str) -> dict[str, set[str]]:
    """The clock times a (lower-case) message states, by slot: ``arriveby`` after "arrive
    by", ``leaveat`` after "leave after", else ``time`` ("a table at 16:30")."""
    found: dict[str, set[str]] = {}
    taken: list[tuple[int, int]] = []
    for pattern in _TIMES:
        for m in pattern.finditer(text):
            clock = _clock(m)
            if clock is None or any(a <= m.start() < b for a, b in taken):
                continue
            value, start, end = clock
            taken.append((start, end))
            before = text[max(0, start - 30) : start]
            slot = (
                "arriveby"
                if _ARRIVE.search(before)
                else "leaveat"
                if _LEAVE.search(before)
                else "time"
            )
            found.setdefault(slot, set()).update(_readings(m, value))
    return found


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
                if _PART_OF_NUMBER.match(low[m.end(1) :]) or _GLUED.search(low[: m.start(1)]):
                    continue  # "1.5 people", "1/2 stars", "-5000 people": no number it knows
                found.setdefault(slot, set()).add(_value(slot, m.group(1)))
    for slot, values in times(low).items():
        found.setdefault(slot, set()).update(values)
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
    ask_domain: Callable[[str], str | None] = lambda text: None
    """the goal domain a system question is about, when its words say so ("how many tickets")"""
    other_domain: Callable[[str], str | None] = lambda text: None
    """a domain the message asks for that the goal does not have (packs: the entity it names)"""


_MULTIWOZ = _Language(
    read=mentions,
    stated_only=frozenset(_STATED_ONLY),
    booking=lambda domain: ("people", "day", "stay", "time"),
    ask_domain=lambda text: next((d for d, cue in _ASK_CUES.items() if cue.search(text)), None),
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

    def other_domain(text: str) -> str | None:
        unnamed = text.lower()
        for name in sorted(keys, key=len, reverse=True):
            if len(name) > 3:
                unnamed = unnamed.replace(name.lower(), " ")
        mentioned = entity_mentioned(pack, unnamed)
        return mentioned if mentioned is not None and mentioned not in task.domains else None

    return _Language(
        other_domain=other_domain,
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


_VOCAB: dict[str, Callable[[str], bool]] = {
    "people": lambda v: v.isdigit() and 1 <= int(v) <= 20,
    "stay": lambda v: v.isdigit() and 1 <= int(v) <= 14,
    "stars": lambda v: v.isdigit() and 0 <= int(v) <= 5,
    "day": lambda v: v in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                           "sunday"),
    "pricerange": lambda v: v in ("cheap", "moderate", "expensive"),
    "area": lambda v: v in ("north", "south", "east", "west", "centre"),
    "type": lambda v: v in ("hotel", "guesthouse"),
    "parking": lambda v: v in ("yes", "no", "free"),
    "internet": lambda v: v in ("yes", "no", "free"),
    "time": lambda v: re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", v) is not None,
}  # fmt: skip
"""The schema's vocabulary of each closed MultiWOZ slot (and a booking time, HH:MM; only for
what was never given -- a time said is never verified): a goal value outside it ("-5000
people", "daybefore", "5long nights" of the unrealistic set) is one the review cannot be
certain it reads a user's words against."""
UNVERIFIED = "unverified: "
"""The evidence prefix of a simulator fault the review cannot verify with certainty: listed,
counted in the fault rate, but no ground for a ``simulator`` or ``both`` verdict."""
NO_EFFECT = "no effect: "
"""The evidence prefix of a verified statement outside the goal that is seen to have cost
nothing (:func:`_costly`: taken back, booked over by the system, or met by a venue of the
goal): listed and counted in the fault rate like :data:`UNVERIFIED`, no ground for a verdict."""
_RESIDUE = {
    "people": re.compile(
        r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple|few|"
        r"single|alone|myself|just me|same|everyone|all of us|both of us)\b"
    ),
    "stay": re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|night|week|weekend)\w*"),
    "stars": re.compile(r"\d|\bstar|\b(?:one|two|three|four|five)\b"),
    "day": re.compile(r"day|\b(?:mon|tue|wed|thu|fri|sat|sun)|week|tomorrow|tonight"),
    "time": re.compile(
        r"\d|o'?clock|noon|midnight|morning|afternoon|evening|night|lunch|dinner|breakfast"
    ),
}
"""What in a user's words may be a value of the slot the review's patterns did not read (a
bare number, "daybefore", "in the evening"): where any is, a value it never read may still
have been given."""
_RESIDUE_ANY = re.compile(r"\d|day|week|tomorrow|tonight|o'?clock|noon|morning|evening|night")


def _certain_goal(task: BookingTask, slot: str, values: Iterable[str], language: _Language) -> bool:
    """Whether every goal value of ``slot`` is one the review reads with certainty: in the
    schema's vocabulary (MultiWOZ), or read back as itself from its own words (a pack)."""
    values = [v for v in values if v != "dontcare"]
    if not values:
        return False
    if language is _MULTIWOZ:
        check = _VOCAB.get(slot)
        return check is not None and all(check(v) for v in values)
    return all(slot in (r := language.read(v, set())) and v in r[slot] for v in values) or all(
        re.fullmatch(r"[a-z]+|\d{1,2}", v) for v in values
    )


def _clean_statement(text: str, slot: str, value: str, language: _Language) -> bool:
    """Whether the user's turn states ``value`` for ``slot`` unambiguously: the only value it
    gives that slot, and not inside what looks like a name (a capitalised word next to it that
    does not begin the sentence: "the Alpha Miltion guest house")."""
    read = language.read(text, set())
    if read.get(slot, set()) - {value}:
        return False  # two values for one slot in one turn: which is meant is a guess
    if language is not _MULTIWOZ:
        return True
    words = {"guesthouse": r"guest ?house", "moderate": r"mid|moderate|reasonabl"}.get(value, "")
    pattern = re.compile(
        r"(\b" + re.escape(value) + r"\b" + (f"|{words}" if words else "") + ")", re.I
    )
    for m in pattern.finditer(text):
        if _name_like(text[: m.start()], reverse=True) or _name_like(text[m.end() :]):
            return False
    return True


_WORD = re.compile(r"[A-Za-z][\w'-]*")


def _name_like(side: str, reverse: bool = False) -> bool:
    """Whether the word next to a value (before it, ``reverse``; else after it) looks like part
    of a name: capitalised, not "I", and not the first word of a sentence ("On monday." is no
    name; "the Alpha Miltion guest house" is). Punctuation between them ends the neighbourhood."""
    gap = re.search(r"[A-Za-z][\w'-]*\s*$", side) if reverse else _WORD.match(side.lstrip())
    if gap is None or (not reverse and side[: len(side) - len(side.lstrip())].strip()):
        return False
    word = gap.group(0).strip()
    if not word[:1].isupper() or word in ("I", "I'm", "I'd", "I'll"):
        return False
    if reverse:
        ahead = side[: gap.start()].rstrip()
        return bool(ahead) and ahead[-1] not in ".!?"
    return True
    return True


def _never_given(
    events: list[Any], slot: str, since: int, language: _Language, other_goal: set[str]
) -> bool:
    """Whether the user certainly gave no value for ``slot``: no turn after ``since`` states
    one, no turn at all states one outside the goal's other domains' values, and no turn holds
    words that may be a value the patterns did not read (:data:`_RESIDUE`)."""
    residue = _RESIDUE.get(slot, _RESIDUE_ANY) if language is _MULTIWOZ else _RESIDUE_ANY
    later = False
    for e in events:
        if e.kind != "user_message":
            continue
        text = str(e.data.get("text", ""))
        read = language.read(text, set()).get(slot, set())
        if read and (e.turn > since or read - other_goal):
            return False
        low = text.lower()
        for values in language.read(text, set()).values():
            for v in values:
                low = low.replace(v, " ")
        for spans in (m.span() for p in _TIMES for m in p.finditer(low)):
            low = low[: spans[0]] + " " * (spans[1] - spans[0]) + low[spans[1] :]
        if residue.search(_strip_read(low, language)):
            return False
        later = later or e.turn > since
    return later


def _strip_read(low: str, language: _Language) -> str:
    """A lower-case user turn without the spans the review's patterns read (what is left is
    where an unread value may hide)."""
    if language is not _MULTIWOZ:
        return low
    for patterns in _PATTERNS.values():
        for pattern in patterns:
            low = pattern.sub(lambda m: " " * len(m.group(0)), low)
    return low


def _verify(
    task: BookingTask,
    record: EpisodeRecord,
    events: list[Any],
    slips: Sequence[tuple[int, str | None, str, Fault]],
    ended: Sequence[tuple[Fault, str | None]],
    language: _Language,
    spoken: Sequence[tuple[int, Mapping[str, set[str]]]] = (),
) -> list[Fault]:
    """The simulator faults with evidence the review cannot verify with certainty marked
    :data:`UNVERIFIED` (issue 42, the fourth held-out round: abstain rather than guess).

    Verified are: a statement outside the goal (``contradicts_goal``, ``not_in_goal``) made
    unambiguously (:func:`_clean_statement`) for a closed slot whose goal value the review is
    certain of, and acted on by the system (a later search or booking carries it); a value
    withheld (``withheld_value``) or never given before the end (``early_done``) that the goal
    holds with certainty and that no user turn may have given in words the patterns did not
    read (:func:`_never_given`), after a question the user had a turn to answer; the
    simulator's crash. A time, free text and a pack entity's name are never verified."""
    out: list[Fault] = []
    for at, slot, value, fault in slips:
        ok = (
            _acted_on(events, at, slot, value, language)
            if slot is None
            else slot not in _TIME_SLOTS
            and slot not in _GOAL_WORDS
            and (
                fault.kind == "not_in_goal"
                or _certain_goal(
                    task,
                    slot,
                    _goal_values(task, slot, normalise=language.normalise) or (),
                    language,
                )
            )
            and (language is not _MULTIWOZ or slot in _VOCAB)
            and _clean_statement(str(events[at].data.get("text", "")), slot, value, language)
            and _acted_on(events, at, slot, value, language)
        )
        if ok and slot is not None and not _costly(task, events, at, slot, value, language, spoken):
            out.append(fault.model_copy(update={"evidence": NO_EFFECT + fault.evidence}))
            continue
        out.append(fault if ok else _unverified(fault))
    give_up = "gave_up" in (record.reason or "")
    for fault, slot in ended:
        if fault.side != "simulator":
            out.append(fault)
            continue
        slots = [slot] if slot else fault.evidence.split("never given: ")[-1].split(", ")
        if fault.kind == "withheld_value" and not _asked_of(task, fault.evidence, slots, language):
            out.append(_unverified(fault))
            continue
        ok = not (fault.kind == "early_done" and give_up) and all(
            _certain_goal(task, s, _held(task, s, events, language), language)
            and _never_given(
                events,
                s,
                fault.turn if fault.kind == "withheld_value" else -1,
                language,
                _held(task, s, events, language, booked=True),
            )
            for s in slots
        )
        out.append(fault if ok else _unverified(fault))
    return out


_DOMAIN_WORDS = {
    "train": re.compile(r"\b(?:train|tickets?|travel\w*|leave|arrive)\b"),
    "restaurant": re.compile(r"\b(?:restaurant|table|dine|dinner|lunch|eat)\b"),
    "hotel": re.compile(r"\b(?:hotel|guest ?house|stay|nights?|rooms?|arrive at)\b"),
}


def _asked_of(task: BookingTask, question: str, slots: Sequence[str], language: _Language) -> bool:
    """Whether a system question is certainly about a goal domain holding ``slots``: on
    MultiWOZ, the domains its words name ("For the train: ... what time you want to leave"
    names the train, which holds no booking time) are exactly one, and it holds every slot; a
    question naming none counts only when the goal has one domain. A pack's questions name
    their slot's own description."""
    if language is not _MULTIWOZ:
        return True
    low = question.lower()
    named = [d for d, words in _DOMAIN_WORDS.items() if words.search(low)]
    if not named and len(task.domains) == 1:
        named = list(task.domains)
    return len(named) == 1 and all(
        _goal_values(task, s, named[0], language.normalise) for s in slots
    )


def _held(
    task: BookingTask, slot: str, events: list[Any], language: _Language, booked: bool = False
) -> set[str]:
    """The goal values of ``slot`` in the domains left unbooked (``booked``: in the booked)."""
    done = _booked(events)
    return {
        v
        for d in task.domains
        if (d in done) == booked
        for v in _goal_values(task, slot, d, language.normalise) or ()
    }


def _unverified(fault: Fault) -> Fault:
    return fault.model_copy(update={"evidence": UNVERIFIED + fault.evidence})


def _verdict(record: EpisodeRecord, faults: Sequence[Fault]) -> Review:
    """The review, its verdict from the agent's faults and the *verified* simulator faults
    that may have cost the goal only: a failed episode whose only simulator evidence is
    unverified or of no effect is ``agent`` if the system has a fault, else ``unclear``."""
    review = review_of(record, faults)
    counted = [f for f in faults if not f.evidence.startswith((UNVERIFIED, NO_EFFECT))]
    return review.model_copy(update={"verdict": review_of(record, counted).verdict})


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
    slips: list[tuple[int, str | None, str, Fault]] = []  # (event, slot, value, fault)
    spoken: list[tuple[int, dict[str, set[str]]]] = []  # (event, what the user stated)
    last_said: dict[str, int] = {}  # slot -> the last turn the user stated a value for it
    for index, e in enumerate(events):
        if e.kind == "user_message":
            text = str(e.data.get("text", ""))
            read = language.read(text, names)
            if language is _MULTIWOZ:
                for slot, form in _GOAL_WORDS.items():
                    for value in _goal_values(task, slot) or set():
                        if re.search(form.format(re.escape(value)), text.lower()):
                            read.setdefault(slot, set()).add(value)
            other = language.other_domain(text)
            if other is not None:
                slips.append(
                    (
                        index,
                        None,
                        other,
                        Fault(side="simulator", kind="not_in_goal", turn=e.turn, evidence=text),
                    )
                )
            for slot, pattern in (("people", _SAME), ("day", _SAME_DAY)):
                if slot not in read and slot in said and pattern.search(text.lower()):
                    read[slot] = set(said[slot])  # "for the same group of people"
            spoken.append((index, {slot: set(values) for slot, values in read.items()}))
            for slot, values in read.items():
                said.setdefault(slot, set()).update(values)
                last_said[slot] = e.turn
                allowed = _goal_values(task, slot, normalise=language.normalise)
                if allowed and slot in _TIME_SLOTS and values & allowed:
                    values = values & allowed  # "by 3:00" read as 15:00, as the goal has it
                for value in sorted(values):
                    if allowed is None:
                        if slot in language.stated_only:
                            slip = Fault(
                                side="simulator", kind="not_in_goal", turn=e.turn, evidence=text
                            )
                            slips.append((index, slot, value, slip))
                        continue
                    if "dontcare" in allowed or value in allowed:
                        stated.setdefault(slot, set()).add(value)
                    elif slot in _TIME_SLOTS and any(slot_matches(slot, value, a) for a in allowed):
                        continue  # "arrives by 8:07" keeps a goal of "by 10:00"
                    elif slot not in _UNCHECKED:
                        slip = Fault(
                            side="simulator", kind="contradicts_goal", turn=e.turn, evidence=text
                        )
                        slips.append((index, slot, value, slip))
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
        elif e.kind == "booking_result" and not e.data.get("ok"):
            faults += _own_slots(e, language)
    ended: list[tuple[Fault, str | None]] = []
    if record.outcome is not Outcome.SUCCESS:
        ended = _unbooked(task, record, events, stated, asked, language, refusals, last_said)
    # a stray value the system never used does not count once the system is seen to have given
    # up on a domain the user gave everything for: that failure is the system's either way
    ignored = any(f.kind == "gave_up" for f, _ in ended)
    kept = [s for s in slips if not ignored or _acted_on(events, s[0], s[1], s[2], language)]
    faults += _verify(task, record, events, kept, ended, language, spoken)
    if record.outcome is not Outcome.SUCCESS:
        faults += _refused(task, events, refusals)
        faults += _ending(record)
    return _verdict(record, faults)


def _acted_on(
    events: list[Any], at: int, slot: str | None, value: str, language: _Language
) -> bool:
    """Whether a search or booking after event ``at`` carries ``value`` for ``slot`` (or, with
    no slot, is in domain ``value``): whether the system acted on what the user said."""
    for e in events[at + 1 :]:
        if e.kind not in ("db_query", "booking_request"):
            continue
        if slot is None:
            if str(e.data.get("domain")) == value:
                return True
            continue
        args = e.data.get("arguments")
        given = args.get(slot) if isinstance(args, dict) else None
        if isinstance(given, dict):
            given = given.get("value")
        if given is not None and language.normalise(slot, given) == value:
            return True
    return False


def _carried(event: Any, slot: str, language: _Language) -> str | None:
    """The value a search or booking carries for ``slot`` (normalised), or None."""
    args = event.data.get("arguments")
    given = args.get(slot) if isinstance(args, dict) else None
    if isinstance(given, dict):  # a search operator: {"operator": "=", "value": ...}
        given = given.get("value")
    return None if given is None else language.normalise(slot, given)


def _costly(
    task: BookingTask,
    events: list[Any],
    at: int,
    slot: str,
    value: str,
    language: _Language,
    spoken: Sequence[tuple[int, Mapping[str, set[str]]]] = (),
) -> bool:
    """Whether a value the user stated outside its goal, and the system acted on, could have
    cost the goal (issue 42, the sixth held-out set): for each domain whose search or booking
    carried it -- a goal domain that holds the slot, if the user did not take it back (no later
    turn of its, before the system turns to another domain, states that domain's goal value
    for the slot and not the value: "Sorry, I meant monday", the seventh held-out set) and
    that domain's last search or booking carrying
    the slot still carries the value (the system did not book over it); a goal domain that
    leaves the slot open, if the database holds a venue
    meeting the domain's goal but none that also has the value (an extra constraint that a
    venue of the goal meets costs nothing); a domain outside the goal, always."""
    calls = [
        (i, e)
        for i, e in enumerate(events)
        if e.kind in ("db_query", "booking_request") and _carried(e, slot, language) is not None
    ]
    acting = [(i, e) for i, e in calls if i > at and _carried(e, slot, language) == value]
    for domain in sorted({str(e.data.get("domain")) for _, e in acting}):
        if domain not in task.domains:
            return True
        held = _goal_values(task, slot, domain, language.normalise)
        if held:
            moved_on = next(  # the system's first call in another domain: the talk moved on
                (
                    i
                    for i, e in enumerate(events)
                    if i > at
                    and e.kind in ("db_query", "booking_request")
                    and str(e.data.get("domain")) != domain
                ),
                len(events),
            )
            if any(
                at < i < moved_on and said.get(slot, set()) & held and value not in said[slot]
                for i, said in spoken
            ):
                continue  # taken back: what the system did after is its own doing
            last = [e for _, e in calls if str(e.data.get("domain")) == domain][-1]
            if "dontcare" not in held and _carried(last, slot, language) == value:
                return True
            continue
        if _excludes_goal(task, domain, slot, value):
            return True
    return False


def _excludes_goal(task: BookingTask, domain: str, slot: str, value: str) -> bool:
    """Whether ``slot`` = ``value`` leaves no venue of ``domain``'s goal in the database while
    the goal alone has one (a goal the database cannot serve is no one's the review can see)."""
    world = world_of(task.task_set)
    compare = world.compare.get(domain, {})
    database = world.database()

    def venues(constraints: Mapping[str, str]) -> int:
        asked = {k: {"operator": compare.get(k, "="), "value": v} for k, v in constraints.items()}
        return database.count(domain, database.conditions(domain, asked))

    goal = dict(task.domains[domain].info)
    return venues(goal) > 0 and venues({**goal, slot: value}) == 0


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
            if event.kind == "booking_request":
                # a booking slot left out is missing; a constraint left out is not honoured
                kind = "missing_slots" if slot in language.booking(domain) else "ignored_constraint"
                call = (
                    f"booking_request {domain} without {slot} (user said {', '.join(sorted(said))})"
                )
                out.append(Fault(side="agent", kind=kind, turn=event.turn, evidence=call))
            continue
        if language is _MULTIWOZ and slot in _GOAL_WORDS:
            continue  # only the goal's own value is read for it: another may be the user's
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
    refusals: Sequence[tuple[int, str]] = (),
    last_said: Mapping[str, int] | None = None,
) -> list[tuple[Fault, str | None]]:
    """Faults about goal domains left without a booking, and values the system asked for that
    a goal domain left unbooked holds (as a constraint or a booking slot) and the user never
    gave. Once the system has refused a booking outright, neither what the user had not yet
    given when asked before that refusal nor its ending the dialogue is the user's fault: the
    system would not book whatever it was told. A question that names its domain ("how many
    tickets") and that the user never answered -- stated no value after the first such question
    -- leaves that value ungiven for that domain, even if the user said one for another domain
    before (held-out study, issue 42). Each fault comes with the slot it is about (if one)."""
    out: list[tuple[Fault, str | None]] = []
    booked = _booked(events)
    refused = max((turn for turn, _ in refusals), default=None)
    unanswered: set[tuple[str, str]] = set()  # (domain, slot) asked for and never answered
    first: dict[tuple[str | None, str], int] = {}  # (domain, slot) -> the first question's turn
    for slot, turn, text in asked:
        first.setdefault((language.ask_domain(text.lower()), slot), turn)
    for slot, turn, text in asked:
        if refused is not None and turn <= refused:
            continue
        domain_asked = language.ask_domain(text.lower())
        goal = task.domains.get(domain_asked or "")
        if (
            goal is not None
            and domain_asked not in booked
            and slot in (goal.book or goal.fail_book)
            and (last_said or {}).get(slot, 0) <= first[(domain_asked, slot)]
        ):
            unanswered.add((str(domain_asked), slot))
            fault = Fault(side="simulator", kind="withheld_value", turn=turn, evidence=text)
            out.append((fault, slot))
            continue
        held: set[str] = set()
        for domain in task.domains:
            if domain not in booked:
                held |= _goal_values(task, slot, domain, language.normalise) or set()
        if held and "dontcare" not in held and not stated.get(slot, set()) & held:
            fault = Fault(side="simulator", kind="withheld_value", turn=turn, evidence=text)
            out.append((fault, slot))
    last = max((e.turn for e in events), default=0)
    given_up = any(
        (goal.book or goal.fail_book)
        and domain not in booked
        and not _missing(task, domain, stated, language, unanswered)
        for domain, goal in task.domains.items()
    )
    for domain, goal in task.domains.items():
        needed = [s for s in (goal.book or goal.fail_book) if s in language.booking(domain)]
        if not (goal.book or goal.fail_book) or domain in booked:
            continue
        missing = _missing(task, domain, stated, language, unanswered)
        ended = record.termination == "done" and language.reached(domain)
        if missing and ended and not refusals and not given_up:
            said = f"{domain} unbooked; never given: {', '.join(missing)}"
            out.append((Fault(side="simulator", kind="early_done", turn=last, evidence=said), None))
        elif not missing and record.outcome is Outcome.FAILURE and not _none_found(events, domain):
            given = ", ".join(f"{s}={'/'.join(sorted(stated[s]))}" for s in needed)
            said = f"{domain} unbooked although the user gave {given or 'what it needs'}"
            out.append((Fault(side="agent", kind="gave_up", turn=last, evidence=said), None))
    return out


_MISSING = re.compile(r"missing slots?: ([\w, ]+)")


def _own_slots(event: Any, language: _Language) -> list[Fault]:
    """A booking that failed for a slot of the system's own (a venue's name, a train or car id,
    not one the user gives): the system's doing."""
    reason = str(event.data.get("reason") or event.data.get("message") or "")
    found = _MISSING.search(reason.lower())
    domain = str(event.data.get("domain"))
    if found is None:
        return []
    own = [s.strip() for s in found.group(1).split(",") if s.strip()]
    own = [s for s in own if s not in language.booking(domain)]
    if not own:
        return []
    said = f"booking {domain} failed without {', '.join(own)}"
    return [Fault(side="agent", kind="missing_slots", turn=event.turn, evidence=said)]


def _none_found(events: list[Any], domain: str) -> bool:
    """Whether the system's last search in ``domain`` found nothing and it tried no booking
    there: it told the user no place matches (a goal the database cannot serve is no one's
    fault the review can see)."""
    searches = [e for e in events if e.kind == "db_result" and e.data.get("domain") == domain]
    booked = any(e.kind == "booking_request" and e.data.get("domain") == domain for e in events)
    return bool(searches) and not searches[-1].data.get("rows") and not booked


def _missing(
    task: BookingTask,
    domain: str,
    stated: dict[str, set[str]],
    language: _Language,
    unanswered: set[tuple[str, str]] = set(),  # noqa: B006 -- read only
) -> list[str]:
    """The booking values of ``domain``'s goal the user has not given (or not answered)."""
    goal = task.domains[domain]
    needed = [s for s in (goal.book or goal.fail_book) if s in language.booking(domain)]
    held = {s: _goal_values(task, s, domain, language.normalise) or set() for s in needed}
    return [s for s in needed if (domain, s) in unanswered or not stated.get(s, set()) & held[s]]


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
    "NO_EFFECT",
    "REVIEWER",
    "SIMULATOR_FAULTS",
    "SYSTEM_FAULTS",
    "UNVERIFIED",
    "VERDICTS",
    "Fault",
    "Review",
    "mentions",
    "review_episode",
    "review_run",
    "times",
]
