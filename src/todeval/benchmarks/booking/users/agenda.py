"""The agenda user: a goal-driven, rule-based user simulator (no model, fully offline).

It works through the goal's booking domains in the order the goal message names them. Per
domain it states its constraints a few at a time, answers the system's questions (or says it
does not mind when the goal is silent on a slot), accepts a suggested venue that does not
contradict what it asked for, asks for the goal's requested attributes together with the
booking request, and asks to book with the goal's booking slots. It tries the ``fail_*`` values
first (see :mod:`.goal`) and switches to the final values when the system reports no match or a
failed booking. When the system's message carries a booking reference, the domain is done; with
a reference for every booking domain it replies exactly ``done``.

It gives up politely when the dialogue stalls (``patience`` turns in a row without progress, or
the same system message ``repeat_limit`` times in a row) and says ``done`` on the next turn;
``gave_up`` and ``end_reason`` tell the game master why it stopped.

Every random choice (how many constraints per turn, their order, the wording) comes from the
episode's ``context.rng``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from todeval.benchmarks.booking.db import load_database
from todeval.benchmarks.booking.protocol import UserContext, UserReply
from todeval.benchmarks.booking.schema import BOOK_SLOTS, slot_values
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.users import phrasing as ph
from todeval.benchmarks.booking.users.ending import EndReason
from todeval.benchmarks.booking.users.goal import DomainPlan, Fallbacks, plan_goal
from todeval.benchmarks.booking.users.reading import (
    SystemReading,
    contradictions,
    mentions_value,
    read_message,
)
from todeval.errors import UsageError

DONE = "done"
_TIME_SLOTS = ("leaveat", "arriveby")
# Slots whose value, when named in an offer, shows the offer meets it.
_SELF_EVIDENT = ("area", "pricerange", "food", "type", "stars", "name", "day")


class _DomainState:
    """Progress in one booking domain."""

    def __init__(self, plan: DomainPlan, rng: random.Random) -> None:
        self.plan = plan
        self.domain = plan.domain
        self.info = dict(plan.first_info)
        self.book = dict(plan.first_book)
        self.order = list(self.info)
        rng.shuffle(self.order)
        self.book_order = [s for s in BOOK_SLOTS[self.domain] if s in self.book]
        self.book_order += [s for s in self.book if s not in self.book_order]
        rng.shuffle(self.book_order)
        self.informed: list[str] = []
        self.book_told: list[str] = []
        self.dontcare: list[str] = []
        self.info_switched = not plan.info_changes
        self.book_switched = not plan.book_changes
        self.booking_requests = 0
        self.reqt_asked = not plan.reqt
        self.reference: str | None = None
        self.reference_asks = 0

    @property
    def uninformed(self) -> list[str]:
        return [s for s in self.order if s not in self.informed]

    def can_switch_info(self) -> bool:
        changes = self.plan.info_changes
        return not self.info_switched and any(s in self.informed for s in changes)

    def can_switch_book(self) -> bool:
        return not self.book_switched and self.booking_requests > 0


def _vocabulary(task_set: str, domain: str) -> dict[str, list[str]]:
    """Known values per slot of one domain, to notice an offer that contradicts a constraint.

    The user knows its town: the schema's categorical values and the venue names and foods of
    the task set's database (a system's offer of another named venue is then recognisable).
    """
    values = slot_values(task_set)
    db = load_database(task_set)
    vocab = {"area": list(values.area), "pricerange": list(values.pricerange)}
    if domain == "restaurant":
        vocab["food"] = db.values("restaurant", "food")
        vocab["name"] = db.values("restaurant", "name")
    elif domain == "hotel":
        vocab["stars"] = list(values.stars)
        vocab["name"] = db.values("hotel", "name")
    else:
        vocab = {"day": list(values.day)}
    return vocab


class AgendaUser:
    """Goal-driven rule-based user simulator (implements ``UserSimulator``).

    Attributes the game master may read after the episode:

    * ``gave_up``: True when the user stopped because the dialogue stalled.
    * ``end_reason``: an :class:`EndReason` (a ``str``) once the user has said ``done``.
    * ``references``: booking domain -> reference the user took from the system's messages.
    * ``stated``: booking domain -> slot -> the value the user last stated for it.
    """

    def __init__(
        self,
        *,
        patience: int = 4,
        repeat_limit: int = 3,
        max_inform: int = 3,
        fallbacks: Fallbacks = "message",
    ) -> None:
        if patience < 1 or repeat_limit < 2 or max_inform < 1:
            raise UsageError("agenda user: patience >= 1, repeat_limit >= 2, max_inform >= 1")
        if fallbacks not in ("message", "goal"):
            raise UsageError(f"agenda user: fallbacks must be 'message' or 'goal': {fallbacks!r}")
        self.patience = patience
        self.repeat_limit = repeat_limit
        self.max_inform = max_inform
        self.fallbacks: Fallbacks = fallbacks
        self.gave_up = False
        self.end_reason: EndReason | None = None
        self.references: dict[str, str] = {}
        self.stated: dict[str, dict[str, str]] = {}
        self._rng = random.Random(0)
        self._task: BookingTask | None = None
        self._domains: list[_DomainState] = []
        self._index = 0
        self._vocab: dict[str, dict[str, list[str]]] = {}
        self._stalled = 0
        self._last_system: str | None = None
        self._repeats = 0
        self._closing = False
        self._finished = False

    # -- protocol ------------------------------------------------------------------------------

    async def start(self, context: UserContext) -> None:
        self._rng = context.rng
        self._task = context.task
        self._domains = [
            _DomainState(p, self._rng) for p in plan_goal(context.task, self.fallbacks)
        ]
        self._vocab = {
            d.domain: _vocabulary(context.task.task_set, d.domain) for d in self._domains
        }

    async def reply(self, system_message: str | None) -> UserReply:
        return UserReply(text=self._next(system_message))

    # -- turn logic ----------------------------------------------------------------------------

    def _next(self, message: str | None) -> str:
        if self._task is None:
            raise RuntimeError("AgendaUser.reply() called before start()")
        if self._finished or self._closing:
            return self._finish(self.end_reason or EndReason.COMPLETED)
        if not self._domains:
            return self._finish(EndReason.COMPLETED)
        if message is None:
            return self._open("open")
        normalised = " ".join(message.lower().split())
        self._repeats = self._repeats + 1 if normalised == self._last_system else 0
        self._last_system = normalised
        progress, text = self._respond(message)
        if self._finished:
            return text
        self._stalled = 0 if progress else self._stalled + 1
        if self._repeats + 1 >= self.repeat_limit and not progress:
            return self._give_up(EndReason.GAVE_UP_REPEATS)
        if self._stalled >= self.patience:
            return self._give_up(EndReason.GAVE_UP_NO_PROGRESS)
        return text

    def _finish(self, reason: EndReason) -> str:
        self._finished = True
        if self.end_reason is None:
            self.end_reason = reason
        return DONE

    def _give_up(self, reason: EndReason) -> str:
        self.gave_up = True
        self.end_reason = reason
        self._closing = True
        return ph.say("give_up", self._rng)

    @property
    def _current(self) -> _DomainState:
        return self._domains[self._index]

    def _respond(self, message: str) -> tuple[bool, str]:
        d = self._current
        reading = read_message(message, d.domain)
        known = set(self.references.values())
        if reading.reference and reading.reference not in known:
            d.reference = reading.reference
            self.references[d.domain] = reading.reference
            return True, self._after_booking()
        if d.reference is not None:
            return True, self._advance()
        if reading.failure:
            return self._on_failure(d, reading)
        return self._on_message(d, message, reading)

    def _on_failure(self, d: _DomainState, reading: SystemReading) -> tuple[bool, str]:
        if d.booking_requests and d.can_switch_book():
            d.book_switched = True
            d.book.update(d.plan.book_changes)
            frags = self._frags(d, list(d.plan.book_changes), d.book)
            return True, ph.say("switch_book", self._rng, frags=frags)
        if d.can_switch_info():
            d.info_switched = True
            d.info = dict(d.plan.final_info)
            d.order = [s for s in d.order if s in d.info] + [s for s in d.info if s not in d.order]
            changed = [s for s in d.order if s in d.plan.info_changes]
            for slot in changed:
                if slot not in d.informed:
                    d.informed.append(slot)
            text = ph.say("switch_info", self._rng, frags=self._frags(d, changed, d.info))
            if d.booking_requests:
                text += " " + self._book_request(d, again=False)
            return True, text
        if d.uninformed:
            return True, self._inform(d)
        if d.booking_requests:
            return False, self._book_request(d, again=True)
        return False, self._restate(d)

    def _on_message(self, d: _DomainState, message: str, r: SystemReading) -> tuple[bool, str]:
        if r.claims_booking and d.booking_requests and not r.asked:
            # "It's booked" without a reference the user could spot: ask for it.
            d.reference_asks += 1
            return d.reference_asks == 1, ph.say("ask_reference", self._rng)
        offered = r.offers_venue or r.offers_booking or r.asks_confirmation
        if offered:
            informed = {s: d.info[s] for s in d.informed if s in d.info}
            bad = contradictions(message, informed, self._vocab[d.domain])
            if bad:
                return False, ph.say("reject", self._rng, frags=self._frags(d, bad, d.info))
        asked = list(r.asked)
        if r.asks_choice and "name" not in asked:
            asked.append("name")
        parts: list[str] = []
        progress = False
        if r.offers_venue or r.offers_booking:
            self._note_satisfied(d, message)
        if asked:
            progress, answer = self._answer(d, asked)
            parts.append(answer)
            if not (r.offers_booking or r.asks_confirmation):
                return progress, " ".join(parts)
        if offered or r.closing or not d.uninformed:
            if d.uninformed:
                parts.append(self._inform(d))
                return True, " ".join(parts)
            if r.asks_confirmation and not asked:
                parts.append(ph.say("yes", self._rng))
            elif offered and not d.booking_requests and not asked:
                parts.append(ph.say("confirm", self._rng))
            progress = progress or d.booking_requests < 2
            if asked and all(s in asked for s in d.book):
                # the answer already gave every booking slot: just say go ahead
                d.booking_requests += 1
                parts.append(ph.say("go_ahead", self._rng))
            else:
                parts.append(self._book_request(d, again=d.booking_requests > 0))
            return progress, " ".join(parts)
        parts.append(self._inform(d))
        return True, " ".join(parts)

    def _note_satisfied(self, d: _DomainState, message: str) -> None:
        """Constraints not yet stated that the offered venue visibly meets need not be stated."""
        for slot in d.uninformed:
            if slot in _SELF_EVIDENT and mentions_value(message, slot, d.info[slot]):
                d.informed.append(slot)

    # -- acts ----------------------------------------------------------------------------------

    def _open(self, act: str) -> str:
        d = self._current
        batch = self._take_batch(d)
        frags = self._frags(d, batch, d.info)
        what = " ".join(p for p in (ph.noun(d.domain, self._rng, d.info.get("type")), frags) if p)
        return ph.say(act, self._rng, what=what)

    def _inform(self, d: _DomainState) -> str:
        batch = self._take_batch(d)
        return ph.say("inform", self._rng, frags=self._frags(d, batch, d.info))

    def _restate(self, d: _DomainState) -> str:
        slots = [s for s in d.order if s in d.informed]
        frags = self._frags(d, slots, d.info)
        what = " ".join(p for p in (ph.noun(d.domain, self._rng, d.info.get("type")), frags) if p)
        return ph.say("restate", self._rng, what=what)

    def _take_batch(self, d: _DomainState) -> list[str]:
        pending = d.uninformed
        if not pending:
            return []
        size = min(len(pending), self._rng.randint(1, self.max_inform))
        batch = pending[:size]
        d.informed.extend(batch)
        return batch

    def _answer(self, d: _DomainState, asked: list[str]) -> tuple[bool, str]:
        """Answer the slots the system asked about; True when something new was said."""
        said: list[str] = []
        dontcare: list[str] = []
        new = False
        for slot in asked:
            targets = [slot]
            if slot == "time" and d.domain == "train":
                targets = [s for s in _TIME_SLOTS if s in d.info] or ["leaveat"]
            for s in targets:
                if s in d.info:
                    new = new or s not in d.informed
                    if s not in d.informed:
                        d.informed.append(s)
                    said.append(s)
                elif s in d.book:
                    new = new or s not in d.book_told
                    if s not in d.book_told:
                        d.book_told.append(s)
                    said.append(s)
                elif s not in dontcare:
                    new = new or s not in d.dontcare
                    if s not in d.dontcare:
                        d.dontcare.append(s)
                    dontcare.append(s)
        sentences = []
        if said:
            values = {**d.info, **d.book}
            sentences.append(ph.say("answer", self._rng, frags=self._frags(d, said, values)))
        for s in dontcare:
            if s == "name":
                sentences.append(ph.say("dontcare_name", self._rng))
            else:
                sentences.append(ph.say("dontcare", self._rng, label=ph.label(s, self._rng)))
        return new, " ".join(sentences)

    def _book_request(self, d: _DomainState, *, again: bool) -> str:
        d.booking_requests += 1
        parts = []
        if not d.reqt_asked:
            d.reqt_asked = True
            parts.append(self._attribute_request(d))
        frags = self._frags(d, d.book_order, d.book)
        d.book_told = list(d.book_order)
        act = "book_again" if again else "book_train" if d.domain == "train" else "book"
        parts.append(ph.say(act, self._rng, frags=frags))
        return " ".join(parts)

    def _attribute_request(self, d: _DomainState) -> str:
        labels = [ph.label(a, self._rng) for a in d.plan.reqt]
        return ph.say("request", self._rng, attrs=ph.join(labels))

    def _after_booking(self) -> str:
        d = self._current
        if not d.reqt_asked:
            d.reqt_asked = True
            return f"{ph.say('thanks', self._rng)} {self._attribute_request(d)}"
        return self._advance()

    def _advance(self) -> str:
        self._index += 1
        if self._index >= len(self._domains):
            return self._finish(EndReason.COMPLETED)
        return self._open("next_domain")

    # -- wording -------------------------------------------------------------------------------

    def _frags(self, d: _DomainState, slots: Iterable[str], values: dict[str, str]) -> str:
        parts = []
        stated = self.stated.setdefault(d.domain, {})
        for slot in slots:
            value = values[slot]
            stated[slot] = value
            surface = self._surface(value)
            if slot == "people":
                parts.append(ph.people_fragment(surface, self._same_group(d, value), self._rng))
            else:
                parts.append(ph.fragment(d.domain, slot, value, self._rng, surface=surface))
        return ph.join(parts)

    def _same_group(self, d: _DomainState, people: str) -> bool:
        earlier = [x for x in self._domains[: self._index] if x is not d]
        if not any(x.book.get("people") == people for x in earlier):
            return False
        return self._rng.random() < 0.5

    def _surface(self, value: str) -> str:
        """The value as the goal message spells it (e.g. "7B" for the normalised "7b")."""
        message = self._task.message if self._task else ""
        pos = message.lower().find(value)
        if pos < 0 or len(message.lower()) != len(message):
            return value
        return message[pos : pos + len(value)]
