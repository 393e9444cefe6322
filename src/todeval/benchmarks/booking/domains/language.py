"""How the generic players of a domain pack say and read slot values (schema-driven wording).

Both the pack agenda user and the pack rule system word a value from the slot's declaration
alone. Plainly (:func:`say` without a random stream): a categorical or text value as it is
spelled in the data ("suv", "castle lane car park"), a whole number with the last word of its
description ("7 seats", "3 days"), a time as "at 09:30". The agenda user paraphrases, as
MultiWOZ's user does (:func:`say` with its random stream, issue 41): a categorical value the
pack has another word for always through one of its aliases ("4x4" for suv, "upmarket" for
expensive: MultiWOZ's user always says its natural wording where it has one), a yes/no slot
through its description and never a bare "yes" or "no" ("with covered parking", "without
electric charging"), a value beside one it does not want ("petrol, not diesel"), a number in
words ("seven seats"), a time as a person says it ("quarter past three in the afternoon").
Reading is the reverse: values and aliases matched as whole words unless negated ("not diesel"),
yes/no slots by their description, numbers by their word in digits or words, times in ``HH:MM``,
12-hour or words. Nothing here knows a particular pack.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from pathlib import Path

from todeval.benchmarks.booking.domains.pack import DomainPack, Entity, Slot, cached_pack
from todeval.benchmarks.booking.tasks import PACK_PREFIX

_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b(?:\s*([ap])\.?m\b\.?)?")
_PARENS = re.compile(r"\s*\(.*?\)")
NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip
_NUMBER = r"(\d{1,3}|" + "|".join(NUMBER_WORDS) + r")"
_HOUR = "|".join(NUMBER_WORDS[1:13])
_PART = r"(in the morning|in the afternoon|in the evening|at night|a\.?m\.?|p\.?m\.?)"
_SPOKEN = re.compile(
    rf"\b(?:(quarter past|half past|quarter to)\s+)?({_HOUR})(?:\s+o\W?clock)?\s+{_PART}"
)
_NEGATED = re.compile(r"\b(not|no|neither|nor|rather than|instead of|anything but)\b")
_CLAUSE = re.compile(r"[,.;:!?]|(?<!anything) but ")
YES_NO = frozenset({"yes", "no"})


def pack_of(task_set: str) -> DomainPack:
    """The pack a ``pack:<folder>`` task set names."""
    return cached_pack(str(Path(task_set[len(PACK_PREFIX) :])))


def keyword(slot: Slot) -> str:
    """The word a number of this slot is said with: the description's last word."""
    words = _PARENS.sub("", slot.description).split()
    return words[-1].lower() if words else "units"


def shared_values(entity: Entity) -> frozenset[str]:
    """Values more than one of the entity's slots can take ("yes", "no"): said and read with
    their slot's description."""
    seen: dict[str, int] = {}
    for slot in [*entity.slots.values(), *entity.booking.values()]:
        for value in set(slot.values or []):
            seen[value] = seen.get(value, 0) + 1
    return frozenset(v for v, n in seen.items() if n > 1)


def say(
    slot: Slot,
    value: str,
    shared: frozenset[str] = frozenset(),
    rng: random.Random | None = None,
    *,
    contrast: bool = True,
) -> str:
    """``value`` of ``slot`` as a phrase (a value in ``shared`` with the slot's description);
    with ``rng``, paraphrased as a person would say it (see the module; ``contrast``: a
    categorical value may be said beside one the user does not want)."""
    if rng is not None:
        return _paraphrase(slot, value, shared, rng, contrast)
    if slot.type == "integer":
        return f"{value} {keyword(slot)}"
    if slot.type == "time":
        return f"at {value}"
    if value in shared:
        return f"{_PARENS.sub('', slot.description)}: {value}"
    return value


def _paraphrase(
    slot: Slot, value: str, shared: frozenset[str], rng: random.Random, contrast: bool
) -> str:
    described = _PARENS.sub("", slot.description)
    if slot.type == "integer":
        n = int(value) if value.isdigit() else -1
        said = NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else value
        return f"{said} {keyword(slot)}"
    if slot.type == "time":
        return spoken_time(value) or f"at {value}"
    if set(slot.values or ()) == YES_NO and value in YES_NO:
        if value == "yes":
            return rng.choice([f"with {described}", f"with {described}, please"])
        # never the bare word "no" (a parrot finds it next to the slot's words): MultiWOZ's
        # user says "without free parking", "that does not offer free parking"
        return rng.choice([f"without {described}", f"without any {described}"])
    # a value the pack has another word for is always said in that word, as MultiWOZ's user
    # always says "upmarket", "somewhere central" where it has such a wording
    aliases = [a for a, v in slot.aliases.items() if v == value and f" {value} " not in words(a)]
    said = rng.choice(aliases) if aliases else value
    if value in shared:
        said = f"{described}: {said}"
    others = [v for v in slot.values or () if v != value and v not in shared]
    if not contrast or slot.type != "categorical" or not others or rng.random() < 0.05:
        return said
    if len(others) <= 2 and len(others) == len(slot.values or ()) - 1 and rng.random() < 0.5:
        # the only value left once the others are ruled out: "not manual", "neither cheap
        # nor expensive" (read by elimination)
        if len(others) == 1:
            return rng.choice([f"not {others[0]}", f"anything but {others[0]}"])
        first, second = rng.sample(others, 2)
        return rng.choice([f"neither {first} nor {second}", f"not {first} or {second}"])
    other = rng.choice(others)
    where = rng.randrange(3 if len(others) >= 2 else 2)  # first, last or between, as often
    if where == 0:
        return rng.choice([f"{said} rather than {other}", f"{said}, not {other}"])
    if where == 1:
        return rng.choice([f"not {other} but {said}", f"not {other}, {said}"])
    second = rng.choice([o for o in others if o != other])
    return rng.choice(
        [f"not {other} but {said}, and not {second}", f"not {other}, {said}, not {second}"]
    )


def spoken_time(value: str) -> str | None:
    """``HH:MM`` as a person says it ("quarter past three in the afternoon", "8:05 am")."""
    m = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", value.strip())
    if m is None:
        return None
    hour, minute = int(m.group(1)), int(m.group(2))

    def part(h: int) -> str:
        h %= 24
        return "in the morning" if h < 12 else "in the afternoon" if h < 18 else "in the evening"

    def word(h: int) -> str:
        return NUMBER_WORDS[h % 12 or 12]

    if minute == 0:
        return f"at {word(hour)} o'clock {part(hour)}"
    if minute == 15:
        return f"at quarter past {word(hour)} {part(hour)}"
    if minute == 30:
        return f"at half past {word(hour)} {part(hour)}"
    if minute == 45:
        return f"at quarter to {word(hour + 1)} {part(hour + 1)}"
    return f"at {hour % 12 or 12}:{minute:02d} {'am' if hour < 12 else 'pm'}"


def read_time(text: str) -> str | None:
    """The time ``text`` states (``HH:MM``, "3:30 pm", "half past three in the afternoon")."""
    low = text.lower()
    spoken = _SPOKEN.search(low)
    if spoken is not None:
        how, hour_word, when = spoken.groups()
        hour = _clock(NUMBER_WORDS.index(hour_word), when)
        minute = {"quarter past": 15, "half past": 30, "quarter to": 45}.get(how or "", 0)
        if how == "quarter to":
            hour = (hour - 1) % 24
        return f"{hour:02d}:{minute:02d}"
    m = _TIME.search(low)
    if m is None:
        return None
    hour = int(m.group(1))
    if m.group(3):
        hour = _clock(hour, m.group(3) + "m")
    return f"{hour:02d}:{m.group(2)}"


def _clock(hour12: int, when: str) -> int:
    """A 12-hour clock's hour (1-12) and part of the day as 0-23."""
    afternoon = when.startswith(("p", "in the afternoon", "in the evening", "at night"))
    hour12 %= 12
    return hour12 + 12 if afternoon else hour12


def read_number(word: str) -> str:
    """A number said in digits or words, in digits."""
    return str(NUMBER_WORDS.index(word)) if word in NUMBER_WORDS else word


def words(text: str) -> str:
    """Lower-cased text with punctuation turned into spaces, padded (for whole-word search)."""
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()) + " "


def _has(text: str, phrase: str) -> bool:
    return f" {' '.join(words(phrase).split())} " in text


def read_slot(
    slot: Slot, text: str, known: Iterable[str] = (), shared: frozenset[str] = frozenset()
) -> str | None:
    """The value of ``slot`` that ``text`` states, or None. ``known``: values of a free-text
    slot (the data's names) to look for; a value in ``shared`` counts only after the slot's
    description ("covered parking: yes")."""
    low = words(text)
    if slot.type == "time":
        return read_time(text)
    if slot.type == "integer":
        m = re.search(rf"\b{_NUMBER}\s+{re.escape(keyword(slot))}\b", text.lower())
        return read_number(m.group(1)) if m else None
    described = _PARENS.sub("", slot.description)
    if set(slot.values or ()) == YES_NO:
        said = " ".join(words(described).split())
        if re.search(rf" (without(?: any)?|no) {re.escape(said)} ", low):
            return slot.normalise("no")
        if re.search(rf" with {re.escape(said)} ", low):
            return slot.normalise("yes")
    candidates = [*(slot.values or []), *slot.aliases, *known]
    for value in sorted(candidates, key=len, reverse=True):
        phrase = f"{described} {value}" if value in shared else value
        if value and _stated(text.lower(), phrase):
            return slot.normalise(value)
    return _left(slot, low, shared)


def _left(slot: Slot, low: str, shared: frozenset[str]) -> str | None:
    """The one value of a small categorical slot left when the text rules out every other
    ("not manual", "neither cheap nor expensive"); None otherwise."""
    values = [v for v in slot.values or () if v not in shared]
    if (
        slot.type != "categorical"
        or not 2 <= len(values) <= 3
        or len(values) < len(slot.values or ())
    ):
        return None
    ruled_out = [v for v in values if _ruled_out(low, v)]
    left = [v for v in values if v not in ruled_out]
    return slot.normalise(left[0]) if len(left) == 1 and ruled_out else None


def _ruled_out(low: str, value: str) -> bool:
    spelled = " ".join(words(value).split())
    return bool(
        re.search(rf" (not|anything but|neither|nor|or) (an? |the )?{re.escape(spelled)} ", low)
    )


def _stated(text: str, phrase: str) -> bool:
    """``phrase`` said in ``text`` (whole words) at least once outside a negated clause: not
    after "not", "no", "neither", "rather than", ... in the same clause ("not diesel", "not
    general practice or dermatology"); a "but" starts a new one ("not cheap but moderate")."""
    spelled = r"\W+".join(re.escape(w) for w in words(phrase).split())
    for m in re.finditer(rf"(?<![a-z0-9]){spelled}(?![a-z0-9])", text):
        clause = _CLAUSE.split(text[: m.start()])[-1]
        if not _NEGATED.search(clause):
            return True
    return False


def entity_mentioned(pack: DomainPack, text: str) -> str | None:
    """The entity ``text`` talks about by its description or its name (longest match wins)."""
    low = words(text)
    best: tuple[int, str] | None = None
    for name, e in pack.entities.items():
        for phrase in (e.description, name, name.replace("-", " ")):
            cleaned = re.sub(r"^(an?|the)\s+", "", phrase.lower())
            if cleaned and _has(low, cleaned) and (best is None or len(cleaned) > best[0]):
                best = (len(cleaned), name)
    return best[1] if best else None


def description_of(entity: Entity) -> str:
    """The entity's description without its article ("rental car")."""
    return re.sub(r"^(an?|the)\s+", "", entity.description)


__all__ = [
    "NUMBER_WORDS",
    "description_of",
    "entity_mentioned",
    "keyword",
    "pack_of",
    "read_number",
    "read_slot",
    "read_time",
    "say",
    "shared_values",
    "spoken_time",
    "words",
]
