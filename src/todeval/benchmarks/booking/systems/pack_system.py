"""The rule system of any domain pack, from the pack's schema and data alone.

``--system rule`` hands a pack's task to :class:`PackSystem` (the MultiWOZ rule system's NLU and
phrasing stay in :mod:`.rule`). It reads each user turn with
:mod:`todeval.benchmarks.booking.domains.language` (the entity talked about, the values of its
slots and booking slots, requested attributes), searches with the constraints it has, offers the
first match, books with the offered row and the booking details once it has them all (passing
on the attributes the user asked for, from the row, as the booking tool's optional arguments),
and answers requested attributes from the row. It never sees the goal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from todeval.benchmarks.booking.domains.language import (
    description_of,
    entity_mentioned,
    pack_of,
    read_slot,
    shared_values,
    words,
)
from todeval.benchmarks.booking.messages import (
    BookingResult,
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserMessage,
)

_REJECT = re.compile(r"\b(another|something else|won't work|does not work|different one)\b")


@dataclass
class _State:
    constraints: dict[str, str] = field(default_factory=dict)
    book: dict[str, str] = field(default_factory=dict)
    rows: list[dict[str, str]] | None = None
    total: int = 0
    offered: int = 0
    searched: dict[str, str] | None = None
    reference: str | None = None
    wants_booking: bool = False
    failure: str | None = None
    asked: list[str] = field(default_factory=list)
    """The attributes the user asked for about this entity (passed on in its booking)."""


class PackSystem:
    """The rule system of a domain pack (see the module)."""

    async def start(self, context: SystemContext) -> None:
        self.pack = pack_of(context.task_set)
        self.entity = next(iter(self.pack.entities))
        self.states = {name: _State() for name in self.pack.entities}
        self.asked: list[str] = []
        self.names = {
            name: [r[e.key] for r in self.pack.rows[name]] for name, e in self.pack.entities.items()
        }

    async def respond(self, observation: Observation) -> SystemOutput:
        if isinstance(observation, UserMessage):
            return SystemOutput(tool_call=self._read_user(observation.text))
        state = self.states[self.entity]
        if isinstance(observation, DbResult):
            state.rows, state.total, state.offered = list(observation.rows), observation.total, 0
            if state.wants_booking and self._missing(state) == [] and state.rows:
                return SystemOutput(tool_call=self._book_call(state))
        elif isinstance(observation, BookingResult):
            if observation.ok:
                state.reference, state.failure = observation.reference, None
            else:
                state.failure = observation.message
        return SystemOutput(tool_call=self._say(self._reply(state)))

    # -- reading --------------------------------------------------------------------------------
    def _named(self, text: str) -> tuple[str, str] | None:
        """(entity, key) of a row the text names, the longest name first."""
        low = words(text)
        found = [
            (len(key), entity, key)
            for entity, keys in self.names.items()
            for key in keys
            if len(key) > 3 and f" {' '.join(words(key).split())} " in low
        ]
        return max(found)[1:] if found else None

    def _read_user(self, text: str) -> ToolCall:
        named = self._named(text)
        rest = text
        if named is not None:  # a name is read as a name: "station square car park"
            self.entity = named[0]
            spelled = r"\W+".join(re.escape(w) for w in words(named[1]).split())
            rest = re.sub(spelled, " ", text, flags=re.IGNORECASE)
        mentioned = entity_mentioned(self.pack, rest)
        if named is None and mentioned is not None:
            self.entity = mentioned
        e = self.pack.entities[self.entity]
        state = self.states[self.entity]
        low = words(text)
        shared = shared_values(e)
        if named is not None:
            state.constraints = {e.key: named[1]}
        for name, slot in e.slots.items():
            if name == e.key:
                continue
            value = read_slot(slot, rest, (), shared)
            if value is not None:
                state.constraints[name] = value
        for name, slot in e.booking.items():
            value = read_slot(slot, rest, (), shared)
            if value is not None:
                state.book[name] = value
                state.wants_booking = True
        if " book " in low or " reserve " in low:
            state.wants_booking = True
        self.asked = [a for a in e.attributes if f" {a} " in low]
        state.asked += [a for a in self.asked if a not in state.asked]
        if _REJECT.search(low) and state.rows and state.offered + 1 < len(state.rows):
            state.offered += 1
        if state.constraints and state.constraints != state.searched:
            state.searched = dict(state.constraints)
            args: dict[str, object] = {
                k: {"operator": "=", "value": v} if e.slots[k].operators else v
                for k, v in state.constraints.items()
                if e.slots[k].search
            }
            return ToolCall(name=self.pack.search_tool(self.entity), arguments=args)
        ready = state.wants_booking and state.rows and not self._missing(state)
        if ready and state.reference is None:
            return self._book_call(state)
        return self._say(self._reply(state))

    def _missing(self, state: _State) -> list[str]:
        return [s for s in self.pack.entities[self.entity].booking if s not in state.book]

    def _book_call(self, state: _State) -> ToolCall:
        e = self.pack.entities[self.entity]
        assert state.rows is not None
        row = state.rows[state.offered]
        args = {k: row[k] for k in e.slots if row.get(k)}
        args.update(state.book)
        args.update({a: row[a] for a in state.asked if row.get(a)})
        state.wants_booking = False
        return ToolCall(name=self.pack.book_tool(self.entity), arguments=args)

    # -- saying -------------------------------------------------------------------------------
    def _say(self, message: str) -> ToolCall:
        return ToolCall(name="followup", arguments={"message": message})

    def _reply(self, state: _State) -> str:
        e = self.pack.entities[self.entity]
        what = description_of(e)
        if not state.constraints and state.rows is None:
            return f"Sure. What kind of {what} are you looking for?"
        if not state.rows:
            said = ", ".join(state.constraints.values())
            return f"I am sorry, there is no {what} with {said}. Would you like something else?"
        row = state.rows[state.offered]
        parts = []
        if state.reference is not None:
            parts.append(f"I have booked {row[e.key]}. Your reference number is {state.reference}.")
        elif state.failure is not None:
            parts.append(f"I could not book {row[e.key]}: {state.failure}")
        else:
            shown = ", ".join(row[k] for k in e.slots if k != e.key and row.get(k))
            count = f"I found {state.total}. " if state.total > 1 else ""
            parts.append(f"{count}How about {row[e.key]} ({shown})?")
        for attribute in self.asked:
            if row.get(attribute):
                parts.append(f"Its {attribute} is {row[attribute]}.")
        missing = self._missing(state)
        if state.reference is None and missing:
            wanted = ", ".join((e.booking[s].description if s in e.booking else s) for s in missing)
            parts.append(f"To book it, tell me the {wanted}.")
        if state.reference is not None:
            parts.append("Is there anything else I can help you with?")
        return " ".join(parts)


__all__ = ["PackSystem"]
