"""Normalisation of responses and dialogue states, applied before every metric.

Responses: lower-cased, every ``[placeholder]`` (optionally followed by a plural suffix) mapped to
its canonical class (``[restaurant_phone]`` -> ``PHONE``; unknown names vanish), ``-s``/``-ly``
removed, then a Moses tokenize + detokenize round trip (sacremoses, English).

States: slot names lower-cased without spaces (``arriveby`` -> ``arrive``, ``leaveat`` ->
``leave``); values normalised per slot (venue-name aliases, ``guest house`` -> ``guesthouse``,
times to ``HH:MM``, ``free`` -> ``yes`` for parking and internet).

The Moses round trip lives in ``_moses`` (imported on first use); sacremoses itself is imported
only for non-ASCII text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

# Canonical placeholder classes and the placeholder names (lower case) that map to them.
_PLACEHOLDER_CLASSES: dict[str, tuple[str, ...]] = {
    "ADDRESS": (
        "address", "attraction_address", "hospital_address", "hotel_address", "police_address",
        "restaurant_address", "value_address",
    ),
    "AREA": ("area", "value_area", "attraction_area", "restaurant_area", "hotel_area"),
    "TIME": (
        "booktime", "value_time", "time", "duration", "value_duration", "train_duration",
        "arriveby", "taxi_arriveby", "value_arrive", "arrive by", "train_arriveby", "leaveat",
        "value_leave", "leave at", "train_leaveat", "train_leave", "train_arrive",
        "taxi_leaveat",
    ),
    "DAY": ("day", "value_day", "bookday", "train_day"),
    "PLACE": (
        "destination", "value_destination", "departure", "value_departure", "value_place",
        "train_departure", "train_destination", "taxi_destination", "taxi_departure",
    ),
    "FOOD": ("food", "value_food", "restaurant_food"),
    "NAME": (
        "name", "attraction_name", "hospital_name", "hotel_name", "police_name",
        "restaurant_name", "value_name",
    ),
    "PHONE": (
        "phone", "attraction_phone", "hospital_phone", "hotel_phone", "police_phone",
        "restaurant_phone", "taxi_phone", "value_phone",
    ),
    "POST": (
        "postcode", "attraction_postcode", "hospital_postcode", "hotel_postcode",
        "restaurant_postcode", "value_postcode", "police_postcode",
    ),
    "PRICE": (
        "price", "value_price", "entrancefee", "entrance fee", "train_price",
        "attraction_entrancefee", "pricerange", "value_pricerange", "price range",
        "restaurant_pricerange", "hotel_pricerange", "attraction_pricerange", "attraction_price",
    ),
    "REFERENCE": (
        "ref", "attraction_reference", "hotel_reference", "restaurant_reference",
        "train_reference", "value_reference", "reference",
    ),
    "COUNT": (
        "stars", "value_stars", "hotel_stars", "bookstay", "value_stay", "stay", "bookpeople",
        "value_people", "people", "choice", "value_choice", "value_count", "attraction_choice",
        "hotel_choice", "restaurant_choice", "train_choice",
    ),
    "TYPE": (
        "type", "taxi_type", "taxi_car", "value_type", "value_car", "car", "restaurant_type",
        "hotel_type", "attraction_type",
    ),
    "TRAINID": ("trainid", "train_id", "value_id", "id", "train", "train_trainid"),
    "INTERNET": ("internet", "hotel_internet"),
    "PARKING": ("parking", "hotel_parking"),
    "ID": ("hospital_id", "attraction_id", "restaurant_id"),
    "DEPARTMENT": ("value_department", "department", "hospital_department"),
    "OPEN": ("openhours",),
}  # fmt: skip

PLACEHOLDER_CLASS: dict[str, str] = {
    name: cls for cls, names in _PLACEHOLDER_CLASSES.items() for name in names
}
"""Placeholder name (lower case, without brackets) -> canonical class."""

CANONICAL_CLASSES: tuple[str, ...] = tuple(_PLACEHOLDER_CLASSES)

# A placeholder with an optional plural suffix; the alternation order is part of the rule.
_PLACEHOLDER_RE = re.compile(r"\[([\w\s\d]+)\](es|s|-s|-es|)")
_BRACKETED_RE = re.compile(r"\[([\w\s\d]+)\]")

_NAME_ALIASES: dict[str, str] = {
    # restaurants
    "hotel du vin bistro": "hotel du vin and bistro",
    "the river bar and grill": "the river bar steakhouse and grill",
    "nando's": "nandos",
    "city center b and b": "city center north b and b",
    "acorn house": "acorn guest house",
    "caffee uno": "caffe uno",
    "cafe uno": "caffe uno",
    "rosa's": "rosas bed and breakfast",
    "restaurant called two two": "restaurant two two",
    "restaurant 2 two": "restaurant two two",
    "restaurant two 2": "restaurant two two",
    "restaurant 2 2": "restaurant two two",
    "restaurant 1 7": "restaurant one seven",
    "restaurant 17": "restaurant one seven",
    # hotels
    "lime house": "limehouse",
    "cityrooms": "cityroomz",
    "whale of time": "whale of a time",
    "huntingdon hotel": "huntingdon marriott hotel",
    "holiday inn exlpress, cambridge": "express by holiday inn cambridge",
    "university hotel": "university arms hotel",
    "arbury guesthouse and lodge": "arbury lodge guesthouse",
    "bridge house": "bridge guest house",
    "arbury guesthouse": "arbury lodge guesthouse",
    "nandos in the city centre": "nandos city centre",
    # attractions
    "broughton gallery": "broughton house gallery",
    "scudamores punt co": "scudamores punting co",
    "cambridge botanic gardens": "cambridge university botanic gardens",
    "the junction": "junction theatre",
    "trinity street college": "trinity college",
    "christ college": "christ's college",
    "christs": "christ's college",
    "history of science museum": "whipple museum of the history of science",
    "parkside pools": "parkside swimming pool",
    "the botanical gardens at cambridge university": "cambridge university botanic gardens",
    "cafe jello museum": "cafe jello gallery",
}

_FOOD_ALIASES: dict[str, str] = {
    "eriterean": "mediterranean",
    "brazilian": "portuguese",
    "sea food": "seafood",
    "portugese": "portuguese",
    "modern american": "north american",
    "americas": "north american",
    "intalian": "italian",
    "italain": "italian",
    "asian or oriental": "asian",
    "english": "british",
    "australasian": "australian",
    "gastropod": "gastropub",
    "brutish": "british",
    "bristish": "british",
    "europeon": "european",
}

_TYPE_ALIASES: dict[str, str] = {
    "swimming pool": "swimmingpool",
    "mutliple sports": "multiple sports",
    "night club": "nightclub",
    "guest house": "guesthouse",
}

_TIME_WORDS: dict[str, str] = {
    "afternoon": "13:00",
    "lunch": "12:00",
    "noon": "12:00",
    "mid-day": "12:00",
    "around lunch time": "12:00",
    "morning": "08:00",
    "seven o'clock tomorrow evening": "07:00",
    "three forty five p.m": "15:45",
    "one thirty p.m.": "13:30",
    "six fourty five": "06:45",
    "eight thirty": "08:30",
}
_TIME_PREFIXES: tuple[tuple[str, str], ...] = (
    ("one o'clock p.m", "13:00"),
    ("ten o'clock a.m", "10:00"),
)

TIME_SLOTS = frozenset({"arrive", "leave", "arriveby", "leaveat", "time"})
_HHMM_RE = re.compile(r"[0-9][0-9]:[0-9][0-9]")


def canonical_name(name: str) -> str:
    """A venue or place name in the spelling closest to the database's."""
    name = name.strip().lower()
    name = name.replace(" & ", " and ").replace("&", " and ").replace(" '", "'")
    return _NAME_ALIASES.get(name, name)


def canonical_food(food: str) -> str:
    food = food.strip().lower()
    return _FOOD_ALIASES.get(food, food)


def canonical_type(value: str) -> str:
    return _TYPE_ALIASES.get(value, value)


def _add_twelve_hours(time: str) -> str | None:
    """``'5'`` -> ``'17:00'``, ``'5:30'`` -> ``'17:30'``; ``None`` when not a plain number."""
    parts = time.split(":")
    try:
        if len(parts) == 2:
            return f"{int(parts[0]) + 12}:{parts[1]}"
        if len(parts) == 1 and parts[0].isdigit():
            return f"{int(parts[0]) + 12}:00"
    except ValueError:
        return None
    return None


def canonical_time(time: str) -> str:
    """A time expression in the database's ``HH:MM`` format where it can be recognised.

    Inputs it cannot parse are returned cleaned but otherwise unchanged (they then match no
    train, see :func:`time_to_minutes`).
    """
    time = time.strip().lower()
    if time in _TIME_WORDS:
        return _TIME_WORDS[time]
    for prefix, value in _TIME_PREFIXES:
        if time.startswith(prefix):
            return value
    if time.startswith("by"):
        time = time[3:]
    if time.startswith("after"):
        time = time[5:].strip()
    if time.startswith("afer"):
        time = time[4:].strip()
    if time.endswith("am"):
        time = time[:-2].strip()
    if time.endswith("a.m."):
        time = time[:-4].strip()
    if time.endswith("pm") or time.endswith("p.m."):
        if time.endswith("pm"):
            time = time[:-2].strip()
        if time.endswith("p.m."):
            time = time[:-4].strip()
        afternoon = _add_twelve_hours(time)
        if afternoon is not None:
            return afternoon
    if not time:
        return "00:00"
    if time[-1] in ".,?":
        time = time[:-1]
    if time.isdigit() and len(time) == 4:
        return f"{time[:2]}:{time[2:]}"
    if time.isdigit():
        return time.zfill(2) + ":00"
    if ":" in time:
        time = time.replace(" ", "")
    if len(time) == 4 and time[1] == ":":
        hours, minutes = time.split(":")
        return f"{hours.zfill(2)}:{minutes}"
    return time


def time_to_minutes(time: str) -> int:
    """Minutes after midnight of a string starting with ``HH:MM``; 0 for anything else."""
    if not _HHMM_RE.match(time):
        return 0
    return int(time[:2]) * 60 + int(time[3:5])


def normalize_slot_name(slot: str) -> str:
    """State slot name: lower case, no spaces, ``arriveby``/``leaveat`` -> ``arrive``/``leave``."""
    slot = slot.lower().replace(" ", "")
    if slot == "arriveby":
        return "arrive"
    if slot == "leaveat":
        return "leave"
    return slot


def normalize_slot_value(slot: str, value: str) -> str:
    """A state value normalised for its (already normalised) slot name."""
    if slot in ("name", "destination", "departure"):
        return canonical_name(value)
    if slot == "type":
        return canonical_type(value)
    if slot == "food":
        return canonical_food(value)
    if slot in TIME_SLOTS:
        return canonical_time(value)
    if slot in ("parking", "internet"):
        return "yes" if value == "free" else value
    return value


State = dict[str, dict[str, str]]


def normalize_state(
    state: Mapping[str, Mapping[str, str]],
    memo: dict[tuple[str, str], tuple[str, str]] | None = None,
) -> State:
    """Normalise every slot name and value of a dialogue state (a later duplicate slot wins).

    ``memo`` (optional) caches ``(slot, value)`` -> normalised pair across calls.
    """
    cache = memo if memo is not None else {}
    out: State = {}
    for domain, slots in state.items():
        new: dict[str, str] = {}
        for slot, value in slots.items():
            pair = cache.get((slot, value))
            if pair is None:
                name = normalize_slot_name(slot)
                pair = cache[(slot, value)] = (name, normalize_slot_value(name, value))
            new[pair[0]] = pair[1]
        out[domain] = new
    return out


def canonicalize_placeholders(response: str) -> str:
    """Lower-case and map ``[placeholder]s`` to canonical classes (unknown names -> '')."""
    text = _PLACEHOLDER_RE.sub(lambda m: PLACEHOLDER_CLASS.get(m.group(1), ""), response.lower())
    return text.replace("-s", "").replace("-ly", "")


def moses_round_trip() -> Callable[[str], str]:
    """sacremoses' English tokenize + detokenize as one function (see ``_moses``: ASCII text
    never imports sacremoses; results are identical)."""
    from todeval.scoring.multiwoz._moses import MosesRoundTrip

    return MosesRoundTrip()


class ResponseNormalizer:
    """Normalises responses; results are memoised per instance (responses repeat a lot)."""

    def __init__(self) -> None:
        self._round_trip = moses_round_trip()
        self._memo: dict[str, str] = {}

    def __call__(self, response: str) -> str:
        cached = self._memo.get(response)
        if cached is None:
            cached = self._round_trip(canonicalize_placeholders(response))
            self._memo[response] = cached
        return cached


def placeholder_domains(response: str, domains: frozenset[str]) -> list[str]:
    """Domains named by slot-prefixed placeholders (``[restaurant_name]`` -> ``restaurant``)."""
    found = {m.split("_")[0] for m in _BRACKETED_RE.findall(response.lower())}
    return sorted(found & domains)
