"""The rule system's vocabulary: surface phrases for every slot value of one task set.

Values come from the task set's venue database (names, foods, stations, and the synthetic and
unrealistic sets' own values), from the tool schema's enums (``schema.slot_values``) and, for
the MultiWOZ sets, from the MultiWOZ ontology (foods users ask for that the DB lacks). Each value
gets a few hand-written paraphrases ("center", "moderately priced", "kings cross") and venue
names get short forms ("the gonville" for "gonville hotel") when those are unambiguous.

A :class:`Vocabulary` is immutable and built once per task set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from todeval.benchmarks.booking.schema import slot_values
from todeval.benchmarks.booking.systems.text import normalise_text
from todeval.benchmarks.booking.tasks import read_json
from todeval.benchmarks.booking.world.of_task_set import world_of

MULTIWOZ_AREAS = {
    "centre": ("centre", "center", "central", "centrally", "city centre", "city center",
               "town centre", "town center", "downtown", "middle of town", "centre of town",
               "center of town", "centre of the city", "center of the city", "heart of town",
               "centre area", "center area", "centre part"),
    "north": ("north", "northern", "northside", "north side", "north end"),
    "south": ("south", "southern", "southside", "south side", "south end"),
    "east": ("east", "eastern", "eastside", "east side", "east end"),
    "west": ("west", "western", "westside", "west side", "west end"),
}  # fmt: skip
MULTIWOZ_PRICES = {
    "cheap": ("cheap", "cheaply", "cheapest", "inexpensive", "budget", "low cost",
              "low-cost", "low price", "low priced", "low-priced", "affordable", "not expensive",
              "not too expensive", "bargain", "economical", "lowest price"),
    "moderate": ("moderate", "moderately", "moderately priced", "moderate price",
                 "moderately-priced", "mid-range", "mid range", "midrange", "mid-priced",
                 "mid priced", "medium priced", "medium price", "medium-priced",
                 "reasonably priced", "reasonable price", "reasonable", "average price",
                 "middle price", "moderatly", "moderat", "modest price"),
    "expensive": ("expensive", "pricey", "pricy", "upscale", "high-end", "high end",
                  "luxury", "luxurious", "fancy", "posh", "high price", "high priced",
                  "high-priced", "costly", "fine dining", "upmarket", "splurge", "exclusive",
                  "expesive", "expensively"),
}  # fmt: skip
GUESTHOUSE_WORDS = (
    "guesthouse",
    "guesthouses",
    "guest house",
    "guest houses",
    "b and b",
    "b and bs",
    "bed and breakfast",
    "bed and breakfasts",
    "bnb",
)
FOOD_ALIASES = {
    "sea food": "seafood", "fish": "seafood", "gastro pub": "gastropub", "pub food": "gastropub",
    "british food": "british", "oriental": "asian oriental", "asian": "asian oriental",
    "pan asian": "panasian", "pan-asian": "panasian", "modern  european": "modern european",
    "veggie": "vegetarian", "barbecue": "barbeque", "bbq": "barbeque", "tapas": "spanish",
    "curry": "indian", "noodles": "chinese", "sushi": "japanese", "pizza": "italian",
    "pasta": "italian", "steak": "steakhouse", "americas": "the americas",
}  # fmt: skip
# Ontology values that are annotation noise, not foods.
_FOOD_JUNK = {
    "do n't care",
    "not mentionedc",
    "ital",
    "kor",
    "british food",
    "gastro pub",
    "modern  european",
}
# Foods that are ordinary English words: they count only next to a food word ("world food").
FOOD_NEEDS_CUE = frozenset(
    {
        "world",
        "creative",
        "unusual",
        "traditional",
        "international",
        "fusion",
        "christmas",
        "bistro",
        "modern global",
        "light bites",
        "english",
        "steakhouse",
        "pizza",
        "curry",
        "fish",
        "noodles",
        "steak",
        "pasta",
        "crossover",
        "halal",
        "kosher",
        "polynesian",
    }
)
STATION_ALIASES = {
    "kings cross": "london kings cross", "london kings": "london kings cross",
    "liverpool street": "london liverpool street", "london liverpool": "london liverpool street",
    "liverpool st": "london liverpool street", "birmingham": "birmingham new street",
    "new street": "birmingham new street", "stansted": "stansted airport",
    "bishop stortford": "bishops stortford", "stortford": "bishops stortford",
    "leicster": "leicester", "lecester": "leicester", "peterbourgh": "peterborough",
    "peterbrough": "peterborough", "cambrige": "cambridge", "cambride": "cambridge",
    "steveage": "stevenage", "norwhich": "norwich", "kings lyn": "kings lynn",
    "broxburne": "broxbourne", "the airport": "stansted airport",
    "airport": "stansted airport", "bishops strotford": "bishops stortford",
}  # fmt: skip
# Words too common to stand for a venue on their own: such names need a cue ("called X", "at X",
# a capitalised X in the raw text).
COMMON_WORDS = frozenset(
    (
        "ask",
        "the",
        "a",
        "city",
        "house",
        "home",
        "golden",
        "royal",
        "curry",
        "pizza",
        "rice",
        "india",
        "lucky",
        "star",
        "river",
        "bridge",
        "express",
        "little",
        "copper",
        "kettle",
        "good",
        "luck",
        "oak",
        "cow",
        "slug",
        "varsity",
        "missing",
        "sock",
        "one",
        "two",
        "seven",
        "worth",
        "autumn",
        "hotel",
        "alpha",
        "lodge",
        "cambridge",
        "restaurant",
        "bar",
        "cafe",
        "kitchen",
        "garden",
        "chinese",
        "indian",
        "charlie",
        "alp",
        "whale",
        "clare",
        "book",
        "cheap",
        "water",
        "dark",
        "flying",
        "suits",
        "graffiti",
        "acorn",
        "ashley",
        "cote",
    )
)
_GENERIC_SUFFIXES = (
    "restaurant and bar",
    "restaurant and coffee bar",
    "guest house",
    "guesthouse",
    "bed and breakfast",
    "b and b",
    "restaurant",
    "hotel",
    "bar",
    "cafe",
    "of cambridge",
    "cambridge",
    "city centre",
)
_GENERIC_PREFIXES = ("the ", "restaurant ", "hotel ")


@dataclass(frozen=True)
class Phrase:
    """One surface form: ``kind`` is ``name:<domain>``, ``food``, ``station``, ``area``, ..."""

    text: str
    kind: str
    value: str
    needs_cue: bool = False


@dataclass(frozen=True)
class Vocabulary:
    """All phrases of one task set plus the schema's enums for the numeric-looking slots."""

    task_set: str
    phrases: tuple[Phrase, ...]
    pattern: re.Pattern[str]
    by_text: dict[str, tuple[Phrase, ...]]
    people: tuple[str, ...]
    stay: tuple[str, ...]
    stars: tuple[str, ...]
    days: tuple[str, ...]
    times_free_form: bool
    time_tokens: tuple[str, ...]
    operators: tuple[str, ...]
    names: dict[str, tuple[str, ...]]
    fuzzy_names: tuple[str, ...]
    fuzzy_words: tuple[str, ...]
    routes: frozenset[tuple[str, str]]

    @property
    def unrealistic(self) -> bool:
        return self.task_set == "unrealistic"

    def only_counterpart(self, known_slot: str, station: str) -> str | None:
        """The one station the timetable connects ``station`` with, if there is just one."""
        if known_slot == "destination":
            ends = {dep for dep, dest in self.routes if dest == station}
        else:
            ends = {dest for dep, dest in self.routes if dep == station}
        return next(iter(ends)) if len(ends) == 1 else None


def _strip_generic(name: str) -> str:
    core = name
    changed = True
    while changed:
        changed = False
        for p in _GENERIC_PREFIXES:
            if core.startswith(p) and len(core) > len(p) + 2:
                core, changed = core[len(p) :], True
        for s in _GENERIC_SUFFIXES:
            if core.endswith(" " + s) and len(core) > len(s) + 3:
                core, changed = core[: -len(s) - 1], True
    return core.strip()


def name_aliases(name: str) -> list[str]:
    """Surface forms of a venue name, most specific first (all normalised)."""
    base = normalise_text(name)
    forms = [base]
    swaps = (("guest house", "guesthouse"), ("guesthouse", "guest house"),
             ("bed and breakfast", "b and b"), ("b and b", "bed and breakfast"), ("-", " "),
             ("  ", " "), ("saint ", "st "), ("saint ", "st. "))  # fmt: skip
    for a, b in swaps:
        for f in list(forms):
            if a in f:
                forms.append(f.replace(a, b))
    for f in list(forms):
        if f.startswith("the "):
            forms.append(f[4:])
        core = _strip_generic(f)
        if core != f:
            forms.append(core)
    words = base.split()
    for k in range(2, len(words)):
        forms.append(" ".join(words[:k]))
    seen: list[str] = []
    for f in forms:
        f = f.strip()
        if f and f not in seen:
            seen.append(f)
    return seen


def _ontology_foods() -> list[str]:
    onto = read_json("multiwoz", "ontology.json")
    return [str(v) for v in onto.get("restaurant-food", []) if str(v) not in _FOOD_JUNK]


def _add(out: list[Phrase], text: str, kind: str, value: str, needs_cue: bool = False) -> None:
    norm = normalise_text(text)
    if norm:
        out.append(Phrase(norm, kind, value, needs_cue))


def _name_phrases(
    names: dict[str, list[str]], other_words: set[str], unrealistic: bool
) -> list[Phrase]:
    """Venue names and their short forms; a short form shared by two venues is dropped."""
    owners: dict[str, set[tuple[str, str]]] = {}
    full = {normalise_text(n) for ns in names.values() for n in ns}
    for domain, ns in names.items():
        for name in ns:
            for i, alias in enumerate(name_aliases(name)):
                if i > 0 and alias in full and alias != normalise_text(name):
                    continue  # another venue's full name
                owners.setdefault(alias, set()).add((domain, name))
    out: list[Phrase] = []
    for alias, owner in owners.items():
        if len(owner) != 1:
            continue
        domain, name = next(iter(owner))
        if len(alias) < 3:
            continue
        words = alias.split()
        risky = (
            unrealistic
            or (len(words) == 1 and (alias in COMMON_WORDS or alias in other_words))
            or alias in other_words
            or all(w in COMMON_WORDS for w in words)
        )
        out.append(Phrase(alias, f"name:{domain}", name, risky))
    return out


def build_vocabulary(task_set: str) -> Vocabulary:
    """Collect every phrase of a task set (see the module docstring)."""
    db = world_of(task_set).database()
    sv = slot_values(task_set)
    unrealistic = task_set == "unrealistic"
    phrases: list[Phrase] = []
    # areas and price ranges
    if unrealistic:
        for a in sv.area:
            _add(phrases, a, "area", a)
        for p in sv.pricerange:
            _add(phrases, p, "pricerange", p)
        for t in sv.type:
            _add(phrases, t, "type", t)
        for v in sv.internet:
            _add(phrases, v, "internet", v)
        for v in sv.parking:
            _add(phrases, v, "parking", v)
    else:
        for value, forms in MULTIWOZ_AREAS.items():
            for f in forms:
                _add(phrases, f, "area", value)
        for value, forms in MULTIWOZ_PRICES.items():
            for f in forms:
                _add(phrases, f, "pricerange", value)
        for f in GUESTHOUSE_WORDS:
            _add(phrases, f, "type", "guesthouse")
    for d in sv.day:
        _add(phrases, d, "day", d)
        if not unrealistic:
            _add(phrases, d + "s", "day", d)
    if not unrealistic:
        for abbrev, d in (("tues", "tuesday"), ("weds", "wednesday"),
                          ("thurs", "thursday"), ("thur", "thursday"), ("thu", "thursday"),
                          ("fri", "friday"), ("mon", "monday"), ("tue", "tuesday"),
                          ("wednsday", "wednesday"), ("wednes", "wednesday"),
                          ("thrusday", "thursday"), ("tuesdays", "tuesday"),
                          ("saturady", "saturday"), ("teusday", "tuesday")):  # fmt: skip
            _add(phrases, abbrev, "day", d)
    # foods
    foods = set(db.values("restaurant", "food"))
    if not unrealistic:
        foods |= set(_ontology_foods()) - set(FOOD_ALIASES)
    for f in sorted(foods):
        _add(phrases, f, "food", f, f in FOOD_NEEDS_CUE)
    if not unrealistic:
        for alias, f in FOOD_ALIASES.items():
            _add(phrases, alias, "food", f, alias in FOOD_NEEDS_CUE)
    # stations
    stations = set(db.values("train", "departure")) | set(db.values("train", "destination"))
    if unrealistic:
        pv = sv.possible_values
        stations |= set(pv.get("train-departure", [])) | set(pv.get("train-destination", []))
    for s in sorted(stations):
        _add(phrases, s, "station", s)
    if not unrealistic:
        for alias, s in STATION_ALIASES.items():
            _add(phrases, alias, "station", s)
    other_words = {p.text for p in phrases}
    names = {d: tuple(db.values(d, "name")) for d in ("restaurant", "hotel")}
    phrases += _name_phrases({d: list(n) for d, n in names.items()}, other_words, unrealistic)
    by_text: dict[str, list[Phrase]] = {}
    for ph in phrases:
        by_text.setdefault(ph.text, []).append(ph)
    alternation = "|".join(re.escape(t) for t in sorted(by_text, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])")
    routes = frozenset(
        (r["departure"], r["destination"])
        for r in db.rows("train")
        if r.get("departure") and r.get("destination")
    )
    return Vocabulary(
        task_set=task_set,
        routes=routes,
        phrases=tuple(phrases),
        pattern=pattern,
        by_text={t: tuple(ps) for t, ps in by_text.items()},
        people=tuple(sv.people),
        stay=tuple(sv.stay),
        stars=tuple(sv.stars),
        days=tuple(sv.day),
        times_free_form=sv.time_pattern is None,
        time_tokens=_time_tokens(db.rows("train")) if sv.time_pattern is None else (),
        operators=tuple(sv.operators),
        names=names,
        fuzzy_names=tuple(
            p.text
            for p in phrases
            if (p.kind.startswith("name:") or p.kind == "station")
            and not p.needs_cue
            and len(p.text) >= 9
            and " " in p.text
        ),
        fuzzy_words=tuple(
            p.text
            for p in phrases
            if p.kind == "station" and " " not in p.text and len(p.text) >= 7
        ),
    )


def _time_tokens(rows: list[dict[str, str]]) -> tuple[str, ...]:
    """The train times of a world without a clock ("1e4:30", "00:??"), longest first."""
    found = {normalise_text(r.get(k, "")) for r in rows for k in ("leaveat", "arriveby")}
    return tuple(sorted((t for t in found if t), key=len, reverse=True))


@cache
def vocabulary(task_set: str) -> Vocabulary:
    """The (shared, immutable) vocabulary of a task set."""
    return build_vocabulary(task_set)
