"""The dialogue state tracker of the rule system.

:class:`SlotTracker` keeps, per domain, the slot values the user has given (later values
overwrite earlier ones, so corrections just work), the attributes the user asked for, and the
active domain. Each user turn is read by :func:`~.nlu.parse_turn`; what the system just asked
(:meth:`SlotTracker.expect`, or :meth:`SlotTracker.observe_system` for a system turn given as
text) helps to read short answers such as "5" or "doesn't matter".
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from todeval.benchmarks.booking.systems.nlu import ParseContext, TurnParse, parse_turn, system_asks
from todeval.benchmarks.booking.systems.vocab import Vocabulary, vocabulary


class DomainState(BaseModel):
    """What the user wants in one domain."""

    slots: dict[str, str] = Field(default_factory=dict)
    weak: list[str] = Field(default_factory=list, description="slots read from a loose cue")
    requested: list[str] = Field(default_factory=list, description="attributes asked for")
    since: dict[str, int] = Field(default_factory=dict, description="turn each slot was set in")
    fallback: dict[str, str] = Field(
        default_factory=dict, description="what to try if a slot's value finds nothing"
    )
    mentioned: bool = False

    def informable(self, names: tuple[str, ...]) -> dict[str, str]:
        return {k: v for k, v in self.slots.items() if k in names}


class SlotTracker:
    """Tracks the user's constraints across turns (one instance per dialogue)."""

    def __init__(self, task_set: str, vocab: Vocabulary | None = None) -> None:
        self.task_set = task_set
        self.vocab = vocab or vocabulary(task_set)
        self.domains: dict[str, DomainState] = {}
        self.order: list[str] = []
        self.active: str | None = None
        self.expected: list[tuple[str, str]] = []
        self.venues: dict[str, dict[str, str]] = {}
        self.turns = 0
        self.links: list[tuple[str, str, str | None]] = []
        self.closed: set[str] = set()  # domains the system has booked (set by the system)

    # -- context from the system side ----------------------------------------------------------
    def expect(self, pairs: list[tuple[str, str]]) -> None:
        """Record what the system just asked for, as (domain, slot) pairs."""
        self.expected = list(pairs)

    def observe_system(self, text: str) -> None:
        """Read a system utterance (corpus replay) for the slots it asks about."""
        self.expected = system_asks(text, self.active)

    def note_venue(self, domain: str, row: dict[str, str]) -> None:
        """The venue (a DB row) the system offered or booked: resolves "the same area"."""
        self.venues[domain] = dict(row)

    # -- state --------------------------------------------------------------------------------
    def state(self, domain: str) -> DomainState:
        if domain not in self.domains:
            self.domains[domain] = DomainState()
        return self.domains[domain]

    def known(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for d in set(self.domains) | set(self.venues):
            merged = dict(self.venues.get(d, {}))
            merged.update({k: v for k, v in self.state(d).slots.items() if v != "dontcare"})
            out[d] = merged
        return out

    def context(self) -> ParseContext:
        return ParseContext(active_domain=self.active, expected=list(self.expected),
                            known=self.known(), closed=set(self.closed))  # fmt: skip

    def parse(self, text: str) -> TurnParse:
        """Read a turn without changing the state."""
        return parse_turn(text, self.vocab, self.context())

    def update(self, text: str) -> TurnParse:
        """Read a user turn and apply it to the state."""
        parsed = self.parse(text)
        self.turns += 1
        self.apply(parsed)
        return parsed

    def apply(self, parsed: TurnParse) -> None:
        for d in parsed.domains:
            st = self.state(d)
            st.mentioned = True
            if d not in self.order:
                self.order.append(d)
        for s in parsed.slots:
            st = self.state(s.domain)
            if s.weak and st.slots.get(s.slot) == "dontcare":
                continue  # a loose reading ("hotel") never overrides "any type is fine"
            if st.slots.get(s.slot) != s.value:
                st.since[s.slot] = self.turns
            st.slots[s.slot] = s.value
            st.fallback.pop(s.slot, None)
            if s.weak and s.slot not in st.weak:
                st.weak.append(s.slot)
            elif not s.weak and s.slot in st.weak:
                st.weak.remove(s.slot)
        for s in parsed.fallbacks:
            self.state(s.domain).fallback[s.slot] = s.value
        self._drop_contradicting_times(parsed)
        self.links += [x for x in parsed.links if x not in self.links]
        self._fill_links()
        for d, attrs in parsed.requests.items():
            st = self.state(d)
            for a in attrs:
                if a not in st.requested:
                    st.requested.append(a)
        if parsed.domains:
            touched = [s.domain for s in parsed.slots]
            # The domain the turn is about: the last one named with values, else the last named.
            self.active = touched[-1] if touched else parsed.domains[-1]
        self.expected = []

    def _fill_links(self) -> None:
        """ "A table for the same group" said before the group size was known: once one side of
        the link has a value, the other side gets it too."""
        for target, slot, source in self.links:
            others = [source] if source else [d for d in self.order if d != target]
            for other in others:
                if other is None or other == target:
                    continue
                a, b = self.state(target).slots, self.state(other).slots
                if a.get(slot) in (None, "dontcare") and b.get(slot) not in (None, "dontcare"):
                    a[slot] = b[slot]
                elif b.get(slot) in (None, "dontcare") and a.get(slot) not in (None, "dontcare"):
                    b[slot] = a[slot]

    def _drop_contradicting_times(self, parsed: TurnParse) -> None:
        """Leave after X and arrive by Y <= X cannot both hold: the older of the two goes."""
        if len(self.vocab.operators) < 2:
            return  # a world where times are matched exactly ("=") is not a clock
        slots = self.state("train").slots
        leave, arrive = _clock(slots.get("leaveat")), _clock(slots.get("arriveby"))
        if leave is None or arrive is None or arrive > leave:
            return
        new = {s.slot for s in parsed.slots if s.domain == "train"}
        if "leaveat" in new and "arriveby" not in new:
            slots.pop("arriveby")
        elif "arriveby" in new and "leaveat" not in new:
            slots.pop("leaveat")


def _clock(value: str | None) -> int | None:
    """Minutes after midnight of an HH:MM value (None for anything else)."""
    if value is None or not re.fullmatch(r"(?:[01]\d|2[0-3]):[0-5]\d", value):
        return None
    return int(value[:2]) * 60 + int(value[3:])
