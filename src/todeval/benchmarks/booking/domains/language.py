"""How the generic players of a domain pack say and read slot values (schema-driven wording).

Both the pack agenda user and the pack rule system word a value from the slot's declaration
alone: a categorical or text value is said as it is spelled in the data ("suv", "castle lane car
park"), a whole number with the last word of its description ("7 seats", "3 days"), a time as
"at 09:30". Reading is the reverse: values and aliases matched as whole words, numbers by their
word, times by ``HH:MM``. Nothing here knows a particular pack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from todeval.benchmarks.booking.domains.pack import DomainPack, Entity, Slot, cached_pack
from todeval.benchmarks.booking.tasks import PACK_PREFIX

_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_PARENS = re.compile(r"\s*\(.*?\)")


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


def say(slot: Slot, value: str, shared: frozenset[str] = frozenset()) -> str:
    """``value`` of ``slot`` as a phrase (a value in ``shared`` with the slot's description)."""
    if slot.type == "integer":
        return f"{value} {keyword(slot)}"
    if slot.type == "time":
        return f"at {value}"
    if value in shared:
        return f"{_PARENS.sub('', slot.description)}: {value}"
    return value


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
        m = _TIME.search(text)
        return f"{int(m.group(1)):02d}:{m.group(2)}" if m else None
    if slot.type == "integer":
        m = re.search(rf"\b(\d{{1,3}})\s+{re.escape(keyword(slot))}\b", text.lower())
        return m.group(1) if m else None
    candidates = [*(slot.values or []), *slot.aliases, *known]
    described = _PARENS.sub("", slot.description)
    for value in sorted(candidates, key=len, reverse=True):
        phrase = f"{described} {value}" if value in shared else value
        if value and _has(low, phrase):
            return slot.normalise(value)
    return None


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
    "description_of",
    "entity_mentioned",
    "keyword",
    "pack_of",
    "read_slot",
    "say",
    "shared_values",
    "words",
]
