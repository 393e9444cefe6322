"""Checking what a system said against the user's constraints, from the system's words alone.

Two questions, answered by keyword and pattern matching on the lower-cased text (never by
looking anything up in the database):

* :func:`contradictions` -- which constraints does an offered or booked venue visibly violate?
  ("a moderately priced guesthouse" when the user wants a cheap hotel; a train leaving at 15:36
  when the user wants to leave after 17:00.)
* :func:`misreadings` -- in a "nothing matches" sentence, which slots does the system name with
  a value the user never asked for? ("no train leaving after 12:00 arriving by 12:00" when the
  user only gave a departure time: the system searched with a constraint of its own making.)

Venue names are blanked out before values are looked for, so a name is never read as a
property (the synthetic set has hotels called "... guest house" that are of type hotel, and
"pizza hut city centre" says nothing about an area).

``vocabulary`` maps a slot to its known values (areas, price ranges, foods, types, stars, days,
venue names of the domain under ``name``, train stations under ``station``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

Vocabulary = Mapping[str, Sequence[str]]

TIME_SLOTS = ("leaveat", "arriveby")
FACILITIES = ("parking", "internet")
_VARIANTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("pricerange", "cheap"): ("cheap", "inexpensive", "low-priced", "low-cost"),
    ("pricerange", "moderate"): ("moderate", "moderately", "mid-range", "mid-priced"),
    ("pricerange", "expensive"): ("expensive", "pricey", "upscale", "high-end", "luxury"),
    ("area", "centre"): ("centre", "center", "central"),
    ("area", "north"): ("north", "northern"),
    ("area", "south"): ("south", "southern"),
    ("area", "east"): ("east", "eastern"),
    ("area", "west"): ("west", "western"),
}
_FACILITY_WORD = {"parking": r"parking", "internet": r"(?:internet|wifi|wi-fi)"}
_GUESTHOUSE = re.compile(r"\b(?:guest ?houses?|b ?(?:&|and) ?bs?|bed and breakfasts?)\b")
# "a moderately priced 2-star hotel": "hotel" described as what the venue is, not the generic
# word ("your hotel booking").
_HOTEL = re.compile(
    r"\b(?:a|an)\s+(?:(?!(?:at|in|for|of|to|from|with|near|on|the|this|that|your|our)\b)"
    r"[\w'-]+\s+){0,4}hotel\b"
)
_FROM_WORDS = r"(?:from|leav\w*|depart\w*(?: from)?|starting (?:at|from))"
_TO_WORDS = r"(?:to|arriv\w*(?: in| at)?|destination(?: is)?|going to|heading to|bound for)"
_LEAVE_WORDS = r"(?:leav\w*|depart\w*)"
_ARRIVE_WORDS = r"(?:arriv\w*|gets? in|reach\w*)"


def minutes(value: str) -> int | None:
    """``"HH:MM"`` as minutes after midnight (None for anything else)."""
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", value.strip())
    if not match:
        return None
    return int(match.group(1)) * 60 + int(match.group(2))


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text) is not None


def value_variants(slot: str, value: str) -> tuple[str, ...]:
    """The usual spellings of ``slot = value`` in a system's message."""
    if (slot, value) in _VARIANTS:
        return _VARIANTS[(slot, value)]
    if slot == "stars":
        return (f"{value} star", f"{value}-star", f"{value} stars", f"star rating of {value}")
    return (value,)


def mentions_value(text: str, slot: str, value: str) -> bool:
    """Does the message name ``value`` for ``slot`` (in one of its usual spellings)?"""
    low = text.lower()
    return any(_mentions(low, v) for v in value_variants(slot, value))


def strip_names(low: str, names: Iterable[str]) -> str:
    """``low`` with every known venue name blanked out (longest names first)."""
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        if name in low:
            low = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ; ", low)
    return low


# ---------------------------------------------------------------------------------------------
# What the text says about one slot


def _facility(plain: str, slot: str) -> str | None:
    """``yes``/``no`` when the text says the venue has / lacks free parking or internet."""
    word = _FACILITY_WORD[slot]
    plain = re.sub(r"\bwith or without\b", " ", plain)  # a question, not a property
    negative = (
        rf"\b(?:no|without|not have|doesn't have|does not have|doesn't offer|does not offer"
        rf"|lacks|lacking|not include|paid) (?:free )?{word}"
        rf"|{word} (?:is |are )?(?:not (?:free|available|included|offered)|isn't|unavailable)"
    )
    if re.search(negative, plain):
        return "no"
    positive = (
        rf"\b(?:free|with|has|have|offers?|includ\w*|and) (?:free )?{word}"
        rf"|{word} (?:is |are )?(?:free|available|included)"
    )
    if re.search(positive, plain):
        return "yes"
    return None


def _types(plain: str, known: Iterable[str]) -> set[str]:
    """The accommodation types the text describes a venue as."""
    found = set()
    if _GUESTHOUSE.search(plain):
        found.add("guesthouse")
    if _HOTEL.search(plain):
        found.add("hotel")
    for value in known:
        if value not in ("hotel", "guesthouse") and _mentions(plain, value):
            found.add(value)
    return found


def _said_values(plain: str, slot: str, known: Iterable[str]) -> list[str]:
    return [v for v in known if v and any(_mentions(plain, s) for s in value_variants(slot, v))]


def _times(low: str, slot: str) -> list[int]:
    """Times the text gives for leaving (``leaveat``) or arriving (``arriveby``)."""
    words = _LEAVE_WORDS if slot == "leaveat" else _ARRIVE_WORDS
    out = []
    for match in re.finditer(rf"\b{words}\b[^.?!:\d]{{0,25}}?(\d{{1,2}}:\d{{2}})", low):
        said = minutes(match.group(1))
        if said is not None:
            out.append(said)
    return out


def _stations(low: str, slot: str, stations: Iterable[str]) -> list[str]:
    """Stations the text puts on the ``departure`` or ``destination`` side of a journey."""
    words = _FROM_WORDS if slot == "departure" else _TO_WORDS
    return [s for s in stations if re.search(rf"\b{words}\s+(?:the\s+)?{re.escape(s)}\b", low)]


# ---------------------------------------------------------------------------------------------
# Contradictions


def _contradicts(
    low: str, plain: str, slot: str, value: str, vocabulary: Vocabulary, exact_times: bool
) -> bool:
    if slot in TIME_SLOTS:
        wanted = minutes(value)
        if wanted is None:
            return False
        said = _times(low, slot)
        if exact_times:
            return any(t != wanted for t in said)
        return any(t < wanted if slot == "leaveat" else t > wanted for t in said)
    if slot in ("departure", "destination"):
        stations = vocabulary.get("station", ())
        named = _stations(low, slot, {*stations, value})
        if value in named:
            return False
        other = "destination" if slot == "departure" else "departure"
        return bool(named) or value in _stations(low, other, [value])
    if slot in FACILITIES and value in ("yes", "no"):
        said_facility = _facility(plain, slot)
        return said_facility is not None and said_facility != value
    if slot == "type":
        described = _types(plain, vocabulary.get("type", ()))
        return bool(described) and value not in described
    text = low if slot == "name" else plain
    if any(_mentions(text, v) for v in value_variants(slot, value)):
        return False
    others = [v for v in vocabulary.get(slot, ()) if v and v != value]
    return bool(_said_values(text, slot, others))


def contradictions(
    text: str,
    constraints: Mapping[str, str],
    vocabulary: Vocabulary,
    names: Iterable[str] = (),
) -> list[str]:
    """Constraint slots the text contradicts.

    A categorical slot is contradicted when the text names another known value and never the
    user's own (so a list of options that includes the wanted value is no contradiction); an
    accommodation type when the venue is described as another type; free parking or internet
    when the text says the venue lacks it (or has it, when the user wants none); a train time
    when the train leaves before ``leaveat`` or arrives after ``arriveby``; a station when the
    journey starts or ends elsewhere or runs the wrong way. ``names`` are venue names to blank
    out before looking for values.
    """
    low = text.lower()
    plain = strip_names(low, names)
    return [
        slot
        for slot, value in constraints.items()
        if _contradicts(low, plain, slot, value, vocabulary, exact_times=False)
    ]


def misreadings(
    text: str,
    constraints: Mapping[str, str],
    slots: Iterable[str],
    vocabulary: Vocabulary,
    names: Iterable[str] = (),
) -> dict[str, str | None]:
    """What a "nothing matches" text got wrong about the user's search, slot by slot.

    ``slot -> the user's value`` when the text names another value for a constraint (any other
    time counts for train times), ``slot -> None`` when it names a value for one of ``slots``
    that the user has no constraint on.
    """
    low = text.lower()
    plain = strip_names(low, names)
    out: dict[str, str | None] = {}
    for slot in slots:
        if slot in constraints:
            if _contradicts(low, plain, slot, constraints[slot], vocabulary, exact_times=True):
                out[slot] = constraints[slot]
        elif _names_some_value(low, plain, slot, vocabulary):
            out[slot] = None
    return out


def says_something(
    text: str, slot: str, value: str, vocabulary: Vocabulary, names: Iterable[str] = ()
) -> bool:
    """Does the text say anything about ``slot`` (the user's ``value`` or another one)?"""
    low = text.lower()
    plain = strip_names(low, names)
    if slot == "name":
        return _mentions(low, value) or bool(_said_values(low, slot, vocabulary.get(slot, ())))
    if slot in FACILITIES and value not in ("yes", "no"):
        return bool(_said_values(plain, slot, [value, *vocabulary.get(slot, ())]))
    if slot in ("departure", "destination"):
        stations = [value, *vocabulary.get("station", ())]
        other = "destination" if slot == "departure" else "departure"
        return bool(_stations(low, slot, stations)) or value in _stations(low, other, [value])
    if _names_some_value(low, plain, slot, vocabulary):
        return True
    return any(_mentions(plain, v) for v in value_variants(slot, value))


def _names_some_value(low: str, plain: str, slot: str, vocabulary: Vocabulary) -> bool:
    if slot in TIME_SLOTS:
        return bool(_times(low, slot))
    if slot in ("departure", "destination"):
        return bool(_stations(low, slot, vocabulary.get("station", ())))
    if slot in FACILITIES:
        word = _FACILITY_WORD[slot]
        return re.search(rf"\b{word}\b", plain) is not None
    if slot == "type":
        return bool(_types(plain, vocabulary.get("type", ())))
    if slot == "name":
        return False
    return bool(_said_values(plain, slot, vocabulary.get(slot, ())))


# ---------------------------------------------------------------------------------------------
# Booking details

_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
}
_TOKEN = r"(?<![\w.^/-])([\w.^/-]+)"
_BOOK_PATTERNS: dict[str, tuple[str, ...]] = {
    "people": (
        rf"{_TOKEN}\s+(?:people|persons?|guests?|adults?|diners|passengers|tickets?|seats?)\b",
        rf"\b(?:table|booking|reservation) for\s+{_TOKEN}(?![:\w])(?!\s+(?:nights?|days?))",
        rf"\b(?:party|group) of\s+{_TOKEN}",
    ),
    "stay": (rf"{_TOKEN}\s+nights?\b",),
    "time": (r"\b(?:at|for|from)\s+(\d{1,2}:\d{2})\b",),
}


def _same(said: str, value: str) -> bool:
    said = _NUMBER_WORDS.get(said, said)
    return said == value.lower()


def booking_mismatches(
    text: str, wanted: Mapping[str, Iterable[str]], days: Iterable[str] = ()
) -> list[str]:
    """Booking slots (people, day, time, stay) the text gives a value for that is none of the
    ``wanted`` values ("for 1 person" when the user asked for 5). ``days`` are the known day
    names (a day is wrong when another is named and none of the wanted ones)."""
    low = text.lower()
    bad = []
    for slot, values in wanted.items():
        allowed = {v.lower() for v in values}
        if slot == "day":
            named = [d for d in days if _mentions(low, d)]
            if named and not allowed & set(named):
                bad.append(slot)
            continue
        said = [
            m.group(1).strip(".")
            for pattern in _BOOK_PATTERNS.get(slot, ())
            for m in re.finditer(pattern, low)
        ]
        # a count is a number ("5", "five") or the user's own odd value ("7b"), never "many"
        said = [s for s in said if re.search(r"\d", s) or s in _NUMBER_WORDS or s in allowed]
        if said and not any(_same(s, v) for s in said for v in allowed):
            bad.append(slot)
    return bad
