"""The agenda user of any domain pack, from the goal and the pack's schema alone.

``--user agenda`` hands a pack's task to :class:`PackUser` (the MultiWOZ agenda user's phrasing
stays in :mod:`.agenda`). It works through its goal's entities in order: it asks for the first
one with the constraints it tries first (``fail_info`` when the goal has them), switches to the
final ones when the system finds nothing, accepts the first offer, then gives its booking
details and asks for what the goal requests; a reference number for the entity's booking closes
it. When the system offers nothing for a turn it says its booking details along with its
constraints (so a system that never offers has been told everything it needs). It says ``done``
when every entity is closed, or after ``patience`` turns without progress.
Values are worded by :mod:`todeval.benchmarks.booking.domains.language`, paraphrased as
MultiWOZ's user words its values (through the pack's aliases, descriptions, number words and
spoken times), so that copying the schema's values out of its words is not enough.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from todeval.benchmarks.booking.domains.language import (
    description_of,
    entity_mentioned,
    pack_of,
    say,
    shared_values,
)
from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.benchmarks.booking.tasks import DomainGoal
from todeval.benchmarks.booking.users.ending import EndReason

DONE = "done"
_REFERENCE = re.compile(r"reference(?: number)?(?: is)?:?\s*([A-Z0-9]{5,10})\b")
_NOTHING = re.compile(r"\b(sorry|there is no|there are no|could not find|couldn't find|no match)")
_OFFER = re.compile(r"\b(how about|i found|i have found|i recommend|would you like|available)\b")
_FAILED = re.compile(r"\b(booking failed|could not book|cannot book|can't book)\b")


@dataclass
class _Goal:
    entity: str
    first: dict[str, str]
    final: dict[str, str]
    book: dict[str, str]
    reqt: list[str]
    switched: bool = False
    booked: bool = False
    asked_reqt: bool = False
    offered: bool = False
    book_asks: int = 0

    @property
    def constraints(self) -> dict[str, str]:
        return self.final if self.switched else self.first


class PackUser:
    """The agenda user of a domain pack (see the module)."""

    def __init__(self, *, patience: int = 6) -> None:
        self.patience = patience
        self.gave_up = False
        self.end_reason: EndReason | None = None

    async def start(self, context: UserContext) -> None:
        self.pack = pack_of(context.task.task_set)
        self.rng: random.Random = context.rng
        self.goals = [self._goal(name, g) for name, g in context.task.domains.items()]
        self.stalled = 0
        self.finished = False
        self.wording: dict[tuple[str, str, str], str] = {}

    def _goal(self, entity: str, g: DomainGoal) -> _Goal:
        first = dict(g.fail_info) if g.fail_info else dict(g.info)
        return _Goal(entity, first, dict(g.info), dict(g.book), list(g.reqt))

    def _say(self, entity: str, slots: dict[str, str]) -> str:
        """The values in the user's words: paraphrased as MultiWOZ's user does (an alias, a
        yes/no slot by its description, a value beside one it does not want, numbers and times
        in words), each worded once and kept for the dialogue (a person sticks to its words)."""
        parts = []
        for name, value in slots.items():
            slot = self.pack.slot(entity, name)
            if slot is None:
                parts.append(value)
                continue
            key = (entity, name, value)
            if key not in self.wording:
                e = self.pack.entities[entity]
                contrast = name not in e.booking  # "book it for monday, not friday" is odd
                self.wording[key] = say(slot, value, shared_values(e), self.rng, contrast=contrast)
            parts.append(self.wording[key])
        return ", ".join(parts)

    def _open(self, goal: _Goal) -> str:
        what = description_of(self.pack.entities[goal.entity])
        wanted = self._say(goal.entity, goal.constraints)
        opener = self.rng.choice(["I am looking for a", "I need a", "Can you find me a"])
        return f"{opener} {what} with {wanted}." if wanted else f"{opener} {what}."

    def _finish(self, reason: EndReason) -> str:
        self.finished = True
        self.end_reason = self.end_reason or reason
        return DONE

    def _next_goal(self) -> str:
        left = [g for g in self.goals if not self._closed(g)]
        if not left:
            return self._finish(EndReason.COMPLETED)
        return "Thank you. " + self._open(left[0])

    def _closed(self, g: _Goal) -> bool:
        return g.booked if g.book else g.asked_reqt or (not g.reqt and g.offered)

    async def respond(self, system_message: str | None) -> UserReply:
        return UserReply(text=self._next(system_message))

    def _next(self, message: str | None) -> str:
        if self.finished:
            return DONE
        if message is None:
            return self._open(self.goals[0])
        left = [g for g in self.goals if not self._closed(g)]
        if not left:
            return self._finish(EndReason.COMPLETED)
        goal = left[0]
        before = (goal.switched, goal.booked, goal.asked_reqt, goal.offered)
        text = self._answer(goal, message)
        after = (goal.switched, goal.booked, goal.asked_reqt, goal.offered)
        self.stalled = 0 if before != after else self.stalled + 1
        if self.stalled >= self.patience and not self.finished:
            self.gave_up = True
            return self._finish(EndReason.GAVE_UP_NO_PROGRESS)
        return text

    def _answer(self, goal: _Goal, message: str) -> str:
        low = message.lower()
        referenced = self._referenced(message)
        for other in self.goals:  # "car booked, reference X; parking booked, reference Y"
            if other is not goal and other.book and other.entity in referenced:
                other.booked = True
        if goal.book and (None in referenced or goal.entity in referenced):
            goal.booked = True
            return self._next_goal()
        nothing = _NOTHING.search(low) and not goal.offered
        if nothing and goal.first != goal.final and not goal.switched:
            goal.switched = True
            changed = {k: v for k, v in goal.final.items() if goal.first.get(k) != v}
            return f"Then how about one with {self._say(goal.entity, changed)} instead?"
        if _FAILED.search(low) and goal.book_asks >= 2:
            self.gave_up = True
            return self._finish(EndReason.GAVE_UP_NO_PROGRESS)
        goal.offered = goal.offered or bool(_OFFER.search(low) and not _NOTHING.search(low))
        if not goal.offered:
            wanted = f"I would like one with {self._say(goal.entity, goal.constraints)}."
            if goal.book and self.stalled >= 1:
                wanted += f" I want to book it for {self._say(goal.entity, goal.book)}."
                wanted += self._ask_reqt(goal)
            return wanted
        parts = []
        if goal.book:
            goal.book_asks += 1
            parts.append(f"Please book it for {self._say(goal.entity, goal.book)}.")
        if goal.reqt and not goal.asked_reqt:
            parts.append(self._ask_reqt(goal).strip())
        if not parts:
            return self._next_goal()
        return " ".join(parts)

    def _referenced(self, message: str) -> set[str | None]:
        """The entities a reference number in ``message`` is given for (None: a reference
        whose sentence names no entity, taken as the current one's)."""
        found: set[str | None] = set()
        for sentence in re.split(r"[.;!?]\s+", message):
            if _REFERENCE.search(sentence):
                found.add(entity_mentioned(self.pack, sentence))
        return found

    def _ask_reqt(self, goal: _Goal) -> str:
        """The goal's attributes, asked once, with its booking details (so a system books with
        them: a booking closes the entity)."""
        if not goal.reqt or goal.asked_reqt:
            return ""
        goal.asked_reqt = True
        return f" Also, what is its {' and '.join(goal.reqt)}?"


__all__ = ["PackUser"]
