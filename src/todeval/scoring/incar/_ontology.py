"""The In-Car ontology: intents, informable and requestable slots, and the entity lexicon.

Entity values are normalized like text except that ``7 pm`` is not joined (the lineage's
entity list keeps ``481 amaranta ave``); the result equals the lineage's entity list.
Slot lists are the LABES ones (see ``/work/shared/specs/corpus-scoring.md``). The lexicon maps
every normalized entity string of ``kvret_entities.json`` to its slot, in file order, plus the
first word of each ``event`` and ``poi_type`` entity as a short form (``dentist`` → event).
Integer-valued lists (temperature, distance) are not in the lexicon; regular expressions handle
them during delexicalization.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from todeval.scoring.incar._text import normalize

Intent = Literal["schedule", "navigate", "weather"]
INTENTS: tuple[Intent, ...] = ("schedule", "navigate", "weather")

INFORMABLE: dict[str, tuple[str, ...]] = {
    "weather": ("date", "location", "weather_attribute"),
    "navigate": ("poi_type", "distance"),
    "schedule": ("event", "date", "time", "agenda", "party", "room"),
}
REQUESTABLE: dict[str, tuple[str, ...]] = {
    "weather": ("weather_attribute",),
    "navigate": ("poi", "traffic_info", "address", "distance"),
    "schedule": ("event", "date", "time", "party", "agenda", "room"),
}
#: Slots informable for some intent: the only state keys that Match looks at.
ALL_INFORMABLE: frozenset[str] = frozenset(s for slots in INFORMABLE.values() for s in slots)

_SHORT_FORM_SLOTS = ("event", "poi_type")


@dataclass(frozen=True)
class Lexicon:
    """Normalized entity string → slot, in the order the entity file lists them."""

    entities: dict[str, str]

    def by_length(self) -> list[tuple[str, str]]:
        """Entities longest first (ties keep file order), the order delexicalization uses."""
        return sorted(self.entities.items(), key=lambda item: -len(item[0]))


def build_lexicon(raw: dict[str, Any]) -> Lexicon:
    """Build the lexicon from the parsed ``kvret_entities.json``."""
    entities: dict[str, str] = {}

    def add(value: str, slot: str) -> None:
        text = normalize(value, am_pm=False)
        if not text:
            return
        entities[text] = slot
        if slot in _SHORT_FORM_SLOTS:
            entities[text.split()[0]] = slot

    for slot, values in raw.items():
        if not isinstance(values, list) or not values:
            continue
        for value in values:
            if isinstance(value, str):
                add(value, slot)
            elif isinstance(value, dict):
                for key, text in value.items():
                    if isinstance(text, str):
                        add(text, "poi_type" if key == "type" else str(key))
    return Lexicon(entities=entities)


def load_lexicon() -> Lexicon:
    """The lexicon of the shipped ``kvret_entities.json``."""
    node = resources.files("todeval") / "data" / "incar" / "kvret_entities.json"
    text = node.read_text(encoding="utf-8")
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise ValueError("kvret_entities.json is not an object")
    return build_lexicon(raw)
