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
from typing import Literal, get_args

import todeval.benchmarks.booking.users.phrasing as ph
from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.benchmarks.booking.schema import BOOK_SLOTS, INFORMABLE, slot_values
from todeval.benchmarks.booking.tasks import PACK_PREFIX, BookingTask
from todeval.benchmarks.booking.users.checking import (
    booking_mismatches,
    contradictions,
    misreadings,
    says_something,
)
from todeval.benchmarks.booking.users.ending import EndReason
from todeval.benchmarks.booking.users.goal import DomainPlan, Fallbacks, plan_goal
from todeval.benchmarks.booking.users.pack_user import PackUser
from todeval.benchmarks.booking.users.reading import (
    SystemReading,
    failure_sentences,
    read_message,
)
from todeval.benchmarks.booking.users.venues import VenueNotes
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.dialogue.participants import PlayerOptions
from todeval.errors import UsageError

DONE = "done"
Phrasing = Literal["natural", "verbatim"]
"""How the user words its values: ``natural`` (the default, issue 41) as people say them
("somewhere central", "a party of eight", "half past seven in the evening"), or ``verbatim``
(the schema's strings with a few fixed phrasings: the wording before issue 41, which the
before-refactor fixtures were recorded with). Chosen with ``--user 'agenda?phrasing=verbatim'``."""
_TIME_SLOTS = ("leaveat", "arriveby")


class _DomainState:
    """Progress in one booking domain."""

    def __init__(self, plan: DomainPlan, rng: random.Random, notes: VenueNotes) -> None:
        self.plan = plan
        self.notes = notes
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
        self.rejected: set[str] = set()  # venues (or messages) the user turned down
        self.corrected: set[tuple[str, str | None]] = set()  # misreadings already pointed out
        self.rebook_asks = 0
        self.pending: str | None = None  # reference of a booking the user asked to change

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

    The user knows its town: the schema's categorical values and the venue names, foods and
    train stations of the task set's database (a system's offer of another named venue is then
    recognisable). It never looks up a venue's properties.
    """
    values = slot_values(task_set)
    db = world_of(task_set).database()
    vocab = {"area": list(values.area), "pricerange": list(values.pricerange)}
    if domain == "restaurant":
        vocab["food"] = db.values("restaurant", "food")
        vocab["name"] = db.values("restaurant", "name")
    elif domain == "hotel":
        vocab["stars"] = list(values.stars)
        vocab["type"] = list(values.type)
        vocab["name"] = db.values("hotel", "name")
        for slot in ("parking", "internet"):
            odd = [v for v in getattr(values, slot) if v not in ("yes", "no")]
            if odd:  # the unrealistic set's "on the river", "45g", ...
                vocab[slot] = odd
    else:
        stations = {*db.values("train", "departure"), *db.values("train", "destination")}
        vocab = {"day": list(values.day), "station": sorted(stations)}
    return vocab


def _venue_names(task_set: str) -> list[str]:
    db = world_of(task_set).database()
    return [*db.values("restaurant", "name"), *db.values("hotel", "name")]


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
        rebook_limit: int = 2,
        phrasing: Phrasing = "natural",
    ) -> None:
        if patience < 1 or repeat_limit < 2 or max_inform < 1 or rebook_limit < 0:
            raise UsageError(
                "agenda user: patience >= 1, repeat_limit >= 2, max_inform >= 1, rebook_limit >= 0"
            )
        if phrasing not in get_args(Phrasing):
            raise UsageError(
                f"agenda user: phrasing must be {' or '.join(get_args(Phrasing))}: {phrasing!r}"
            )
        if fallbacks not in ("message", "goal"):
            raise UsageError(f"agenda user: fallbacks must be 'message' or 'goal': {fallbacks!r}")
        self.patience = patience
        self.repeat_limit = repeat_limit
        self.max_inform = max_inform
        self.fallbacks: Fallbacks = fallbacks
        self.rebook_limit = rebook_limit
        self.phrasing: Phrasing = phrasing
        self.gave_up = False
        self.end_reason: EndReason | None = None
        self.references: dict[str, str] = {}
        self.stated: dict[str, dict[str, str]] = {}
        self._rng = random.Random(0)
        self._task: BookingTask | None = None
        self._domains: list[_DomainState] = []
        self._index = 0
        self._vocab: dict[str, dict[str, list[str]]] = {}
        self._names: list[str] = []
        self._days: list[str] = []
        self._refused: set[str] = set()  # references of bookings the user asked to change
        self._stalled = 0
        self._last_system: str | None = None
        self._repeats = 0
        self._closing = False
        self._finished = False

    @classmethod
    def from_options(cls, options: PlayerOptions) -> AgendaUser:
        """The user a run names: ``agenda`` or ``agenda?phrasing=verbatim``."""
        params = dict(options.params)
        phrasing = params.pop("phrasing", "natural")
        if params:
            unknown = ", ".join(params)
            raise UsageError(f"agenda user: unknown parameter(s) {unknown}; known: phrasing")
        if phrasing not in get_args(Phrasing):
            raise UsageError(
                f"agenda user: phrasing must be {' or '.join(get_args(Phrasing))}: {phrasing!r}"
            )
        return cls(phrasing=phrasing)  # type: ignore[arg-type]

    # -- protocol ------------------------------------------------------------------------------

    async def start(self, context: UserContext) -> None:
        self._pack_user: PackUser | None = None
        if context.task.task_set.startswith(PACK_PREFIX):  # a domain pack's goal
            self._pack_user = PackUser()
            await self._pack_user.start(context)
            return
        self._rng = context.rng
        self._task = context.task
        task_set = context.task.task_set
        plans = plan_goal(context.task, self.fallbacks)
        self._vocab = {p.domain: _vocabulary(task_set, p.domain) for p in plans}
        self._names = _venue_names(task_set)
        self._days = list(slot_values(task_set).day)
        self._domains = [
            _DomainState(p, self._rng, VenueNotes(self._vocab[p.domain].get("name", ())))
            for p in plans
        ]

    async def respond(self, system_message: str | None) -> UserReply:
        if getattr(self, "_pack_user", None) is not None:
            inner = self._pack_user
            assert inner is not None
            reply = await inner.respond(system_message)
            self.gave_up, self.end_reason = inner.gave_up, inner.end_reason
            return reply
        return UserReply(text=self._next(system_message))

    # -- turn logic ----------------------------------------------------------------------------

    def _next(self, message: str | None) -> str:
        if self._task is None:
            raise RuntimeError("AgendaUser.respond() called before start()")
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
        evidence = d.notes.evidence(message)
        d.notes.remember(message)
        known = set(self.references.values()) | self._refused
        if reading.reference and reading.reference not in known:
            # booked, but not what the goal asks for: ask for a change (a new booking in the
            # domain replaces the old one); the venue at most rebook_limit times
            venue = self._violations(d, evidence) if d.rebook_asks < self.rebook_limit else []
            details = self._wrong_details(d, message)
            if venue or details:
                d.rebook_asks += bool(venue)
                d.pending = reading.reference
                self._refused.add(reading.reference)
                act = "rebook" if venue else "rebook_details"
                return self._reject(d, [*venue, *details], message, act)
            d.reference = reading.reference
            self.references[d.domain] = reading.reference
            return True, self._after_booking()
        if d.pending is not None and reading.reference == d.pending:
            return True, self._keep_booking(d)  # the system stands by the booking it made
        if d.reference is not None and d.pending is None:
            return True, self._advance()
        if reading.failure:
            return self._on_failure(d, message, reading)
        return self._on_message(d, message, evidence, reading)

    def _violations(self, d: _DomainState, evidence: tuple[str, str]) -> list[str]:
        """Goal constraints (stated or not) that what the system said about a venue violates:
        in this message, or earlier for what this message says nothing about."""
        now, earlier = evidence
        vocab = self._vocab[d.domain]
        bad = contradictions(now, d.info, vocab, self._names)
        silent = {
            s: v
            for s, v in d.info.items()
            if s not in bad and not says_something(now, s, v, vocab, self._names)
        }
        return [*bad, *contradictions(earlier, silent, vocab, self._names)]

    def _wrong_details(self, d: _DomainState, message: str) -> list[str]:
        """Booking slots the message gives another value for than the goal's (either value of
        a slot with a fallback is fine)."""
        plan = d.plan
        wanted = {
            slot: {v for v in (value, plan.first_book.get(slot), plan.final_book.get(slot)) if v}
            for slot, value in d.book.items()
        }
        return booking_mismatches(message, wanted, self._days)

    def _reject(self, d: _DomainState, bad: list[str], message: str, act: str) -> tuple[bool, str]:
        """Turn an offer (or a booking) down, saying the violated constraints and all the ones
        not stated yet, so the next offer can be right."""
        slots = [*bad, *(s for s in d.uninformed if s not in bad)]
        new = [s for s in slots if s not in d.informed]
        d.informed.extend(new)
        key = " | ".join(d.notes.venues(message)) or " ".join(message.lower().split())
        progress = bool(new) or key not in d.rejected
        d.rejected.add(key)
        info = [s for s in slots if s in d.info]
        details = [s for s in slots if s not in d.info]
        needs = []
        if info:
            needs.append(ph.say("need_venue", self._rng, frags=self._frags(d, info, d.info)))
        if details:
            needs.append(ph.say("need_booking", self._rng, frags=self._frags(d, details, d.book)))
        return progress, ph.say(act, self._rng, need=ph.join(needs))

    def _on_failure(
        self, d: _DomainState, message: str, reading: SystemReading
    ) -> tuple[bool, str]:
        if d.booking_requests and d.can_switch_book():
            d.book_switched = True
            d.book.update(d.plan.book_changes)
            frags = self._frags(d, list(d.plan.book_changes), d.book)
            return True, ph.say("switch_book", self._rng, frags=frags)
        fix = self._misread(d, message)
        if fix:
            return True, self._correct(d, fix)
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
        if d.pending is not None:
            return True, self._keep_booking(d)
        if d.uninformed:
            return True, self._inform(d)
        if d.booking_requests:
            return False, self._book_request(d, again=True)
        return False, self._restate(d)

    def _misread(self, d: _DomainState, message: str) -> dict[str, str | None]:
        """Constraints a failure message got wrong and the user has not pointed out yet: slot ->
        the user's value, or None for a slot the user never constrained."""
        text = " ".join(failure_sentences(message))
        slots = [s for s in INFORMABLE[d.domain] if s not in ("name", "trainid")]
        found = misreadings(text, d.info, slots, self._vocab[d.domain], self._names)
        new = {s: v for s, v in found.items() if (s, v) not in d.corrected}
        d.corrected.update(new.items())
        return new

    def _correct(self, d: _DomainState, fix: dict[str, str | None]) -> str:
        """Point out what the system searched for wrongly and restate the search."""
        parts = [ph.say("misunderstanding", self._rng)]
        for slot, value in fix.items():
            if value is None:
                parts.append(ph.say("no_constraint", self._rng, label=ph.label(slot, self._rng)))
        for slot, value in fix.items():
            if value is not None and slot not in d.informed:
                d.informed.append(slot)
        slots = [s for s in d.order if s in d.informed]
        frags = self._frags(d, slots, d.info)
        what = " ".join(p for p in (ph.noun(d.domain, self._rng, d.info.get("type")), frags) if p)
        parts.append(ph.say("clarify", self._rng, what=what))
        return " ".join(parts)

    def _on_message(
        self, d: _DomainState, message: str, evidence: tuple[str, str], r: SystemReading
    ) -> tuple[bool, str]:
        if r.claims_booking and d.booking_requests and not r.asked:
            # "It's booked" without a reference the user could spot: ask for it.
            d.reference_asks += 1
            return d.reference_asks == 1, ph.say("ask_reference", self._rng)
        offered = r.offers_venue or r.offers_booking or r.asks_confirmation
        if d.pending is not None and not (offered or r.asked or r.asks_choice):
            return True, self._keep_booking(d)
        if offered:
            bad = self._violations(d, evidence)
            if bad:
                return self._reject(d, bad, message, "reject")
        if (r.offers_booking or r.asks_confirmation) and self._wrong_details(d, message):
            # "Shall I book it for 1 person?" when the user wants 5: give the details again
            return d.booking_requests < 2, self._book_request(d, again=True)
        asked = list(r.asked)
        if r.asks_choice and "name" not in asked:
            asked.append("name")
        parts: list[str] = []
        progress = False
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
        if any(s in d.book and s not in d.info for s in said) and d.uninformed:
            # booking details go with every constraint not stated yet, never before them
            rest = d.uninformed
            d.informed.extend(rest)
            said = [*rest, *said]
            new = True
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
        if d.uninformed:
            # booking details go with every constraint not stated yet, never before them
            rest = d.uninformed
            d.informed.extend(rest)
            parts.append(ph.say("inform", self._rng, frags=self._frags(d, rest, d.info)))
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

    def _keep_booking(self, d: _DomainState) -> str:
        """The system neither rebooked nor offered anything else: keep the booking it made."""
        assert d.pending is not None
        d.reference = d.pending
        self.references[d.domain] = d.pending
        d.pending = None
        keep = ph.say("keep", self._rng)
        then = self._after_booking()
        return then if self._finished else f"{keep} {then}"

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
            natural = None
            if slot == "people":
                same = self._same_group(d, value)
                if self.phrasing == "natural":
                    natural = ph.natural_people(value, same, self._rng)
                parts.append(natural or ph.people_fragment(surface, same, self._rng))
                continue
            if self.phrasing == "natural":
                natural = ph.natural_fragment(d.domain, slot, value, self._rng)
            parts.append(natural or ph.fragment(d.domain, slot, value, self._rng, surface=surface))
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
