"""``RuleSystem``: an offline rule-based dialogue system for the self-play booking benchmark.

It acts only through the benchmark's tools. Per user turn it

1. reads the message with its :class:`~.tracker.SlotTracker`;
2. picks the domain to work on (the one the user is talking about, else the oldest unfinished);
3. searches that domain's DB with the user's constraints (``retrievefrom...db``), relaxing a
   loosely inferred constraint when nothing matches, and otherwise tells the user that nothing
   matched and asks them to change something;
4. picks a row from the :class:`~..messages.DbResult` (for trains: the first departure after the
   requested time, or the last arrival before it), offers it, answers questions about it from the
   row, and asks for missing booking details;
5. books (``validate...booking``) as soon as the booking details are known, with every required
   argument taken from the chosen row plus the optional attributes the user asked for; on a
   failure it tries another row, or tells the user what was wrong;
6. passes the booking reference on and moves to the next domain the user mentioned.

Its own outputs are checked against the task set's tool schema before they are sent, so it never
commits a format violation. It never sees the user's goal. The vocabulary for reading the user
comes from the task set's DB (its world's database) and schema; every venue fact it tells the user
comes from a DB result it received.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import todeval.benchmarks.booking.systems.replies as R
from todeval.benchmarks.booking.messages import (
    Action,
    ActionParser,
    BookingResult,
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserMessage,
    Violation,
)
from todeval.benchmarks.booking.schema import (
    BOOK_SLOTS,
    BOOKING_TOOLS,
    DB_TOOLS,
    INFORMABLE,
    OPTIONAL_BOOKING_ATTRIBUTES,
    REQUIRED_BOOKING_ARGS,
    SlotValues,
    slot_values,
)
from todeval.benchmarks.booking.systems.nlu import TurnParse
from todeval.benchmarks.booking.systems.pack_system import PackSystem
from todeval.benchmarks.booking.systems.patterns import DOMAINS, HOTEL, RESTAURANT, TRAIN
from todeval.benchmarks.booking.systems.text import normalise_text
from todeval.benchmarks.booking.systems.tracker import SlotTracker
from todeval.benchmarks.booking.systems.vocab import vocabulary
from todeval.benchmarks.booking.tasks import PACK_PREFIX

_DB_TOOL = {d: t for t, d in DB_TOOLS.items()}
_BOOK_TOOL = {d: t for t, d in BOOKING_TOOLS.items()}
_SEARCH_PREFS = {RESTAURANT: ["food", "area", "pricerange"], HOTEL: ["area", "pricerange"]}
_TRAIN_SEARCH = ["departure", "destination", "day"]
# Constraints that may be dropped when nothing matches (read from loose cues or "no ...").
_RELAXABLE_VALUES = {("type", "hotel"), ("internet", "no"), ("parking", "no")}
MAX_CALLS_PER_TURN = 12


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _flat(query: dict[str, Any]) -> dict[str, str]:
    """A DB query's constraints as plain values ({"operator", "value"} objects unwrapped)."""
    return {k: str(v["value"] if isinstance(v, dict) else v) for k, v in query.items()}


def _row_key(domain: str, row: dict[str, str]) -> str:
    return row.get("trainid", "") if domain == TRAIN else row.get("name", "")


def _minutes(value: str) -> int | None:
    try:
        h, m = value.split(":")
        return int(h) * 60 + int(m)
    except ValueError:
        return None


def _row_meets(row: dict[str, str], slot: str, value: str, ordered: bool = True) -> bool:
    """Whether a DB row meets one constraint (times as >= / <= where the world has a clock)."""
    have = row.get(slot)
    if have is None:
        return True
    if slot in ("leaveat", "arriveby") and ordered:
        a, b = _minutes(have), _minutes(value)
        if a is not None and b is not None:
            if slot == "leaveat":
                return a >= b
            leaves = _minutes(row.get("leaveat", ""))
            # a train leaving at 23:40 and "arriving" at 02:23 arrives the next day
            return a <= b and (leaves is None or leaves <= a)
    return have == value


@dataclass
class _Progress:
    """Where the system stands in one domain."""

    query: dict[str, Any] | None = None
    rows: list[dict[str, str]] = field(default_factory=list)
    total: int = -1
    row: dict[str, str] | None = None
    offered: str = ""
    described: dict[str, str] | None = None  # the last row the user was told about in full
    rejected: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    relaxed: set[str] = field(default_factory=set)
    told_no_match: bool = False
    asked: Counter[str] = field(default_factory=Counter)
    answered: set[str] = field(default_factory=set)
    reference: str | None = None
    booked: dict[str, str] | None = None
    booked_row: dict[str, str] | None = None
    unbookable: bool = False
    attempts: int = 0
    rebooks: int = 0  # re-bookings in this user turn (one per turn: a change, then done)
    refine: str = ""  # "pending" while a narrower train query is out, "done" after it
    confirmed: bool = False  # the user accepted the offered row (needed after a relaxation)
    strict: bool = False  # the user insisted on a constraint we had relaxed: relax no more
    name_only: bool = False  # search by the venue's name alone (the full query matched nothing)
    reopened: int = 0  # times a booked domain was reopened because the user changed a constraint
    picked: bool = False  # the user chose the row themselves (by train id)


class RuleSystem:
    """A rule-based booking system (see the module docstring). One instance per episode."""

    def __init__(self, *, max_calls_per_turn: int = MAX_CALLS_PER_TURN) -> None:
        self.max_calls_per_turn = max_calls_per_turn

    # -- protocol -----------------------------------------------------------------------------
    async def start(self, context: SystemContext) -> None:
        self._pack_system: PackSystem | None = None
        if context.task_set.startswith(PACK_PREFIX):  # a domain pack: the schema-driven rules
            self._pack_system = PackSystem()
            await self._pack_system.start(context)
            return
        self.task_set = context.task_set
        self.rng = context.rng
        self.values: SlotValues = slot_values(context.task_set)
        self.tracker = SlotTracker(context.task_set, vocabulary(context.task_set))
        self.parser = ActionParser.for_task_set(context.task_set)
        self.progress: dict[str, _Progress] = {d: _Progress() for d in DOMAINS}
        self.parts: list[str] = []
        self.asked_now: list[tuple[str, str]] = []
        self.calls = 0
        self.last_parse: TurnParse | None = None
        self.turns = 0
        self._pending_booking: dict[str, str] = {}

    async def respond(self, observation: Observation) -> SystemOutput:
        if getattr(self, "_pack_system", None) is not None:
            assert self._pack_system is not None
            return await self._pack_system.respond(observation)
        if isinstance(observation, UserMessage):
            self._begin_turn(observation.text)
        elif isinstance(observation, DbResult):
            self._read_db(observation)
        elif isinstance(observation, BookingResult):
            self._read_booking(observation)
        self.calls += 1
        return SystemOutput(tool_call=self._decide())

    # -- reading observations ------------------------------------------------------------------
    def _begin_turn(self, text: str) -> None:
        self.turns += 1
        self.parts, self.asked_now, self.calls = [], [], 0
        for p in self.progress.values():
            p.attempts = p.rebooks = 0
        before = {d: dict(self.tracker.state(d).slots) for d in DOMAINS}
        self.tracker.closed = {d for d in DOMAINS if self.progress[d].reference is not None}
        parsed = self.tracker.update(text)
        self.last_parse = parsed
        booked_before = {d for d in DOMAINS if self.progress[d].reference is not None}
        for s in parsed.slots:
            if s.domain not in DOMAINS:
                continue
            p = self.progress[s.domain]
            p.told_no_match = False
            now = self.tracker.state(s.domain).slots.get(s.slot)
            if s.slot in INFORMABLE[s.domain] and before[s.domain].get(s.slot) != now:
                p.relaxed.clear()
                p.confirmed = False
                p.strict = False
                p.name_only = False
            if s.slot in INFORMABLE[s.domain] and now is not None:
                # a constraint the booked venue does not meet, new or repeated: book again
                self._reopen_if_unsuitable(s.domain, s.slot, now)
        self._acknowledge_booked(parsed, booked_before)
        focus = self._focus()
        if focus is not None:
            p = self.progress[focus]
            insisted = [s for s in parsed.slots if s.domain == focus and s.slot in p.relaxed]
            if insisted and p.reference is None:
                p.relaxed.clear()
                p.strict, p.confirmed = True, False
            elif {"affirm", "book"} & set(parsed.acts) and p.offered and not p.told_no_match:
                p.confirmed = True
            elif p.relaxed and p.offered and not p.confirmed and p.reference is None:
                self._forget_unrestated_weak(focus, parsed)
        if "alternative" in parsed.acts:
            d = self._focus()
            if d is not None and self.progress[d].row is not None:
                p = self.progress[d]
                assert p.row is not None
                p.rejected.add(_row_key(d, p.row))
                p.row = None
        self._read_train_id(text)
        self._answer_booked_requests(parsed)

    def _acknowledge_booked(self, parsed: TurnParse, booked_before: set[str]) -> None:
        """The user repeats constraints or booking details of a domain that is booked and still
        fits: say so (with the venue and the reference) instead of staying silent."""
        for d in DOMAINS:
            p = self.progress[d]
            # the venue's own name ("after we eat at the Royal Standard") asks for nothing
            said = [
                s
                for s in parsed.slots
                if s.domain == d and s.value != "dontcare" and s.slot != "name"
            ]
            if d not in booked_before or p.reference is None or p.booked_row is None or not said:
                continue
            if self._rebook_args(d) is not None:
                continue  # a changed booking detail: it is booked again in this turn
            self.parts.append(
                f"Your booking already fits that: {R.describe(d, p.booked_row)}. "
                f"The reference number is {p.reference}."
            )

    def _forget_unrestated_weak(self, d: str, parsed: TurnParse) -> None:
        """The user restates what they want without a relaxed constraint that was only read from
        a loose cue (type "hotel" from the word "hotel"): it was not a constraint, drop it."""
        st = self.tracker.state(d)
        p = self.progress[d]
        restated = [
            s for s in parsed.slots
            if s.domain == d and s.slot in INFORMABLE[d] and s.value != "dontcare"
        ]  # fmt: skip
        if len(restated) < 2 or not all(k in st.weak for k in p.relaxed):
            return
        for k in p.relaxed:
            st.slots.pop(k, None)
            st.weak.remove(k)
        p.relaxed.clear()

    def _answer_booked_requests(self, parsed: TurnParse) -> None:
        """Questions about something already booked (the reference, the phone number...)."""
        for d, attrs in parsed.requests.items():
            p = self.progress.get(d)
            if p is None or p.reference is None or p.booked_row is None:
                continue
            if "reference" in attrs and self._rebook_args(d) is None:
                self.parts.append(f"Your {d} booking reference number is {p.reference}.")
            booked = p.booked or {}
            known = [
                a for a in attrs
                if a != "reference" and (a in booked or a not in OPTIONAL_BOOKING_ATTRIBUTES[d])
            ]  # fmt: skip
            text = R.attribute_text(d, p.booked_row, known)
            if text:
                self.parts.append(text)

    def _reopen_if_unsuitable(self, d: str, slot: str, value: str) -> None:
        """A new constraint the booked venue does not meet: search and book again."""
        p = self.progress[d]
        if p.booked_row is None or p.reference is None or p.reopened >= 2 or value == "dontcare":
            return
        if _row_meets(p.booked_row, slot, value, len(self.values.operators) > 1):
            return
        p.reopened += 1
        p.reference, p.row, p.offered, p.query = None, None, "", None

    def _read_train_id(self, text: str) -> None:
        m = re.search(r"\btr ?(\d{4})\b", normalise_text(text))
        p = self.progress[TRAIN]
        if m and p.rows:
            wanted = f"TR{m.group(1)}"
            for row in p.rows:
                if row.get("trainid") == wanted:
                    p.row, p.picked = row, True

    def _read_db(self, result: DbResult) -> None:
        p = self.progress.get(result.domain)
        if p is None:
            return
        if p.refine == "pending":
            p.refine = "done"
            if any(not self._violations(result.domain, r) for r in result.rows):
                p.rows = result.rows
                p.row = None
            return
        p.rows, p.total = list(result.rows), result.total
        if p.row is not None and p.row not in p.rows:
            # the offered row is kept only if the new search returned that very row (names
            # repeat in some task sets, so the name alone does not identify it)
            p.row, p.picked = None, False

    def _read_booking(self, result: BookingResult) -> None:
        d = result.domain
        p = self.progress.get(d)
        if p is None or p.row is None:
            return
        row = p.row
        if result.ok:
            first = p.reference is None
            p.reference = result.reference
            p.booked = self._pending_booking
            p.booked_row = dict(row)
            self.tracker.note_venue(d, row)
            self.parts.append(self._confirmation(d, row, result.reference or "", first))
            return
        message = result.message.lower()
        if "not available" in message:
            p.unbookable = True
            self.parts.append(
                f"I'm sorry, I can't make a {d} booking in this conversation, but "
                f"{R.describe(d, row)} would suit you."
            )
            return
        if "invalid values" in message:
            bad = [s for s in BOOK_SLOTS[d] if s in message]
            if bad:
                for s in bad:
                    self.tracker.state(d).slots.pop(s, None)
                self.parts.append(
                    f"The booking system did not accept the {R.join_words(bad)} you gave."
                )
                return
        p.failed.add(_row_key(d, row))
        p.row = None

    # -- deciding ------------------------------------------------------------------------------
    def _decide(self) -> ToolCall:
        if self.calls >= self.max_calls_per_turn:
            return self._finish()
        seen: set[str] = set()
        while True:
            d = self._focus()
            if d is None or d in seen:
                break
            seen.add(d)
            call = self._plan(d)
            if call is not None:
                checked = self._check(call)
                if checked is not None:
                    return checked
                break
            if not self._finished(d):
                break
        return self._finish()

    def _check(self, call: ToolCall) -> ToolCall | None:
        action: Action | Violation = self.parser.parse(SystemOutput(tool_call=call))
        if isinstance(action, Violation):
            # Never send an invalid action: give up on this row instead.
            for d in DOMAINS:
                p = self.progress[d]
                if call.name == _BOOK_TOOL.get(d) and p.row is not None:
                    p.failed.add(_row_key(d, p.row))
                    p.row = None
            return None
        return call

    def _finished(self, d: str) -> bool:
        p = self.progress[d]
        return p.unbookable or (p.reference is not None and not self._rebook_args(d))

    def _focus(self) -> str | None:
        open_domains = [d for d in self.tracker.order if d in DOMAINS and not self._finished(d)]
        if self.tracker.active in open_domains:
            return self.tracker.active
        return open_domains[0] if open_domains else None

    # -- one domain ----------------------------------------------------------------------------
    def _plan(self, d: str) -> ToolCall | None:
        p = self.progress[d]
        st = self.tracker.state(d)
        if p.reference is not None:
            args = self._rebook_args(d)
            if args is not None and p.rebooks < 1:
                p.rebooks += 1
                self._pending_booking = args
                return ToolCall(name=_BOOK_TOOL[d], arguments=args)
            return None
        if d == TRAIN:
            self._infer_station()
        query = self._query(d)
        missing = self._missing_search(d, query)
        if missing:
            self._ask(d, missing)
            return None
        if query != p.query:
            p.query, p.refine = query, ""
            p.told_no_match = False
            return ToolCall(name=_DB_TOOL[d], arguments=query)
        if p.total == 0:
            fallback = {k: v for k, v in st.fallback.items() if k in query}
            if fallback:
                # "moderate; if there is none, expensive": the user's own second choice
                self.parts.append(
                    f"There is no {R.constraint_text(d, _flat(query))}, so I looked for "
                    f"{R.constraint_text(d, fallback)} options as you suggested."
                )
                for k, v in fallback.items():
                    st.slots[k] = v
                    st.fallback.pop(k)
                return self._plan(d)
            if "name" in query and len(query) > 1:
                named = st.since.get("name", 0)
                if any(st.since.get(k, 0) > named for k in query if k != "name"):
                    # the user asked for more after naming the venue: the venue is out
                    self.parts.append(
                        f"{_capital(str(query['name']))} does not have everything you asked "
                        "for, so I looked for other places."
                    )
                    st.slots.pop("name", None)
                    return self._plan(d)
                p.name_only = True
                return self._plan(d)
            relax = [
                k
                for k, v in st.slots.items()
                if k in st.weak
                or (k, v) in _RELAXABLE_VALUES
                or (k in ("leaveat", "arriveby") and len(self.values.operators) == 1)
            ]
            relax = [k for k in relax if k in query and k not in p.relaxed and not p.strict]
            if relax:
                p.relaxed.update(relax)
                return self._plan(d)
            if not p.told_no_match:
                p.told_no_match = True
                self._no_match(d, query)
            return None
        if d == TRAIN and p.refine == "" and self._train_refine(query, p):
            p.refine = "pending"
            narrower = dict(query)
            arrive = query["arriveby"]["value"]
            start = max(0, (_minutes(arrive) or 0) - 180)
            narrower["leaveat"] = {"operator": ">=", "value": f"{start // 60:02d}:{start % 60:02d}"}
            return ToolCall(name=_DB_TOOL[d], arguments=narrower)
        if p.row is not None and not p.picked and self._violations(d, p.row):
            p.row = None  # the user has since said something this row does not meet
        if p.row is None:
            p.row, p.picked = self._choose(d, p), False
            if p.row is None:
                self.parts.append(
                    f"I'm afraid I have no other {R.constraint_text(d, {})} matching your "
                    "request. Would you like to change something?"
                )
                return None
        self.tracker.note_venue(d, p.row)
        self._answer_requests(d, p.row)
        if p.relaxed and not p.confirmed:
            self._offer_relaxed(d, p)
            return None
        missing_book = self._missing_book(d)
        if self._blind(d) and not p.confirmed:
            # nothing the user said picked this row (no constraint at all, or a train on a day
            # they never named): offer it and book only on a yes
            self._offer(d, p)
            if missing_book:
                self._ask(d, missing_book, booking=True)
            elif d == TRAIN:
                self.parts.append(f"Is {p.row.get('day', 'that')} the day you want to travel?")
                self.asked_now.append((d, "day"))
            else:
                self.parts.append("Shall I book it?")
            return None
        if not missing_book and p.attempts < 3:
            p.attempts += 1
            args = self._booking_args(d, p.row)
            self._pending_booking = args
            return ToolCall(name=_BOOK_TOOL[d], arguments=args)
        self._offer(d, p)
        if missing_book:
            self._ask(d, missing_book, booking=True)
        return None

    # -- queries -------------------------------------------------------------------------------
    def _enum(self, slot: str) -> list[str] | None:
        table = {"area": self.values.area, "pricerange": self.values.pricerange,
                 "type": self.values.type, "internet": self.values.internet,
                 "parking": self.values.parking, "day": self.values.day,
                 "stars": self.values.stars}  # fmt: skip
        return table.get(slot)

    def _time_ok(self, value: str) -> bool:
        if self.values.time_pattern is None:
            return bool(value)
        return re.match(self.values.time_pattern, value) is not None

    def _query(self, d: str) -> dict[str, Any]:
        st = self.tracker.state(d)
        p = self.progress[d]
        slots = {k: v for k, v in st.slots.items() if v and v != "dontcare" and k not in p.relaxed}
        if d != TRAIN and slots.get("name") and p.name_only:
            return {"name": slots["name"]}
        ordered = len(self.values.operators) > 1
        out: dict[str, Any] = {}
        for slot in INFORMABLE[d]:
            value = slots.get(slot)
            if value is None or slot == "trainid":
                continue
            enum = self._enum(slot)
            if enum is not None and value not in enum:
                continue
            if slot == "stars":
                out[slot] = {"operator": "=", "value": value}
            elif slot in ("leaveat", "arriveby"):
                if not self._time_ok(value):
                    continue
                op = (">=" if slot == "leaveat" else "<=") if ordered else "="
                out[slot] = {"operator": op, "value": value}
            else:
                out[slot] = value
        return out

    def _infer_station(self) -> None:
        """Fill in the other end of a route when the timetable has only one (and say so)."""
        slots = self.tracker.state(TRAIN).slots
        for known, unknown in (("destination", "departure"), ("departure", "destination")):
            if slots.get(known) and not slots.get(unknown):
                other = self.tracker.vocab.only_counterpart(known, slots[known])
                if other is not None and other != slots[known]:
                    slots[unknown] = other
                    if known == "destination":
                        note = f"Trains to {slots[known]} all run from {other}."
                    else:
                        note = f"Trains from {slots[known]} all run to {other}."
                    self.parts.append(note)

    def _missing_search(self, d: str, query: dict[str, Any]) -> list[str]:
        st = self.tracker.state(d)
        p = self.progress[d]
        if d == TRAIN:
            missing = [s for s in _TRAIN_SEARCH if s not in query and st.slots.get(s) != "dontcare"]
            # departure and destination are needed; the day is asked for twice at most
            missing = [s for s in missing if s != "day" or p.asked[s] < 2]
            timed = any(k in st.slots for k in ("leaveat", "arriveby"))
            if missing and not timed and p.asked["leaveat"] < 1:
                missing.append("leaveat")
            return missing
        if query or st.requested or p.asked["search"] >= 1:
            return []
        if any(s in st.slots for s in ("people", "day", "time", "stay")) or any(
            v == "dontcare" for v in st.slots.values()
        ):
            return []
        p.asked["search"] += 1
        return _SEARCH_PREFS[d]

    def _train_refine(self, query: dict[str, Any], p: _Progress) -> bool:
        return (
            "arriveby" in query
            and "leaveat" not in query
            and p.total > len(p.rows)
            and len(self.values.operators) > 1
            and _minutes(query["arriveby"]["value"]) is not None
        )

    def _violations(self, d: str, row: dict[str, str]) -> list[str]:
        """The user's constraints (as tracked now) that ``row`` does not meet.

        Constraints the system relaxed (and said so), values it could not search for (outside
        the schema's enum) and, in a search by name alone, everything but the name are skipped.
        """
        st = self.tracker.state(d)
        p = self.progress[d]
        out: list[str] = []
        for slot, value in st.slots.items():
            if slot not in INFORMABLE[d] or slot == "trainid" or value in ("", "dontcare"):
                continue
            if slot in p.relaxed or (p.name_only and slot != "name") or slot not in row:
                continue
            enum = self._enum(slot)
            if enum is not None and value not in enum:
                continue
            if slot in ("leaveat", "arriveby") and not self._time_ok(value):
                continue
            if not _row_meets(row, slot, value, len(self.values.operators) > 1):
                out.append(slot)
        return out

    def _choose(self, d: str, p: _Progress) -> dict[str, str] | None:
        rows = [r for r in p.rows if _row_key(d, r) not in p.rejected | p.failed]
        if not rows:
            return None
        fitting = [r for r in rows if not self._violations(d, r)]
        rows = fitting or rows
        wanted = {k: v for k, v in self.tracker.state(d).slots.items() if k in INFORMABLE[d]}
        best = max(sum(r.get(k) == v for k, v in wanted.items()) for r in rows)
        rows = [r for r in rows if sum(r.get(k) == v for k, v in wanted.items()) == best]
        if d == TRAIN:
            st = self.tracker.state(d).slots
            if st.get("leaveat") and _minutes(st["leaveat"]) is not None:
                return min(rows, key=lambda r: _minutes(r.get("leaveat", "")) or 10**6)
            if st.get("arriveby") and _minutes(st["arriveby"]) is not None:
                return max(rows, key=lambda r: _minutes(r.get("arriveby", "")) or -1)
        return rows[0]

    # -- booking -------------------------------------------------------------------------------
    def _book_value_ok(self, slot: str, value: str) -> bool:
        if slot == "people":
            return value in self.values.people
        if slot == "stay":
            return value in self.values.stay
        if slot == "day":
            return value in self.values.day
        if slot == "time":
            return self._time_ok(value)
        return True

    def _blind(self, d: str) -> bool:
        """Whether the chosen row rests on nothing the user asked for."""
        slots = self.tracker.state(d).slots
        if d == TRAIN:
            return slots.get("day") in (None, "")
        return not any(slots.get(k) not in (None, "") for k in INFORMABLE[d])

    def _missing_book(self, d: str) -> list[str]:
        st = self.tracker.state(d).slots
        missing = []
        for slot in BOOK_SLOTS[d]:
            if d == TRAIN and slot == "day":
                continue
            value = st.get(slot)
            if value and value != "dontcare" and not self._book_value_ok(slot, value):
                self.parts.append(self._bad_value(slot, value))
                self.tracker.state(d).slots.pop(slot, None)
                value = None
            if not value or value == "dontcare":
                missing.append(slot)
        return missing

    def _bad_value(self, slot: str, value: str) -> str:
        if slot == "people":
            allowed = self.values.people
            return (
                f"I'm afraid I can only book for {allowed[0]} to {allowed[-1]} people."
                if (self.values.name == "multiwoz")
                else f"I can't book for {value} people."
            )
        if slot == "stay":
            return f"I'm afraid I can't book a stay of {value} nights."
        return f"I'm afraid {value} is not a {slot} I can book."

    def _booking_args(self, d: str, row: dict[str, str]) -> dict[str, str]:
        st = self.tracker.state(d)
        args: dict[str, str] = {}
        for key in REQUIRED_BOOKING_ARGS[d]:
            if key in BOOK_SLOTS[d] and not (d == TRAIN and key == "day"):
                args[key] = st.slots.get(key, "")
            else:
                args[key] = row.get(key, "")
        for attr in OPTIONAL_BOOKING_ATTRIBUTES[d]:
            if attr in st.requested and row.get(attr):
                args[attr] = row[attr]
        return args

    def _rebook_args(self, d: str) -> dict[str, str] | None:
        """New booking arguments when the user changed a booking detail or asked for more."""
        p = self.progress[d]
        if p.booked is None or p.booked_row is None:
            return None
        st = self.tracker.state(d)
        args = dict(p.booked)
        changed = False
        for slot in BOOK_SLOTS[d]:
            if d == TRAIN and slot == "day":
                continue
            v = st.slots.get(slot)
            if v and v != "dontcare" and v != args.get(slot) and self._book_value_ok(slot, v):
                args[slot], changed = v, True
        for attr in OPTIONAL_BOOKING_ATTRIBUTES[d]:
            if attr in st.requested and attr not in args and p.booked_row.get(attr):
                args[attr], changed = p.booked_row[attr], True
        return args if changed else None

    # -- wording -------------------------------------------------------------------------------
    def _ask(self, d: str, slots: list[str], booking: bool = False) -> None:
        p = self.progress[d]
        for s in slots:
            p.asked[s] += 1
            self.asked_now.append((d, s))
            if s == "leaveat":
                self.asked_now.append((d, "arriveby"))
        if booking and p.offered:
            lead = R.pick(self.rng, ["To make the booking,", "For the reservation,"])
            question = R.ask(self.rng, d, slots)
            self.parts.append(f"{lead} {question[0].lower()}{question[1:]}")
            return
        noun = {RESTAURANT: "the restaurant", HOTEL: "your stay", TRAIN: "the train"}[d]
        self.parts.append(f"For {noun}: {R.ask(self.rng, d, slots)}")

    def _offer(self, d: str, p: _Progress) -> None:
        assert p.row is not None
        key = _row_key(d, p.row)
        if p.offered == key:
            return
        p.offered, p.described = key, dict(p.row)
        count = ""
        if p.total > 1:
            count = R.pick(self.rng, [f"I found {p.total} options. ", f"There are {p.total} "
                                      "matches. "])  # fmt: skip
        self.parts.append(f"{count}How about {R.describe(d, p.row)}?")

    def _offer_relaxed(self, d: str, p: _Progress) -> None:
        assert p.row is not None
        strict = {k: v for k, v in self.tracker.state(d).slots.items() if k in INFORMABLE[d]}
        p.offered, p.described = _row_key(d, p.row), dict(p.row)
        missing = self._missing_book(d)
        tail = "Shall I book it?"
        if missing:
            question = R.ask(self.rng, d, missing)
            tail = "If you want it, " + question[0].lower() + question[1:]
            for s in missing:
                self.asked_now.append((d, s))
        self.parts.append(
            f"I couldn't find a {R.constraint_text(d, strict)}. The closest match is "
            f"{R.describe(d, p.row)}. {tail}"
        )
        self.asked_now += [(d, s) for s in p.relaxed]

    def _no_match(self, d: str, query: dict[str, Any]) -> None:
        flat = _flat(query)
        self.parts.append(
            f"I'm sorry, there is no {R.constraint_text(d, flat)} in my database. "
            "Would you like to change one of your requirements?"
        )

    def _answer_requests(self, d: str, row: dict[str, str]) -> None:
        p = self.progress[d]
        st = self.tracker.state(d)
        key = _row_key(d, row)
        todo = [a for a in st.requested if a != "reference" and f"{key}:{a}" not in p.answered]
        if not todo:
            return
        text = R.attribute_text(d, row, todo)
        if text:
            self.parts.append(text)
        p.answered.update(f"{key}:{a}" for a in todo)

    def _confirmation(self, d: str, row: dict[str, str], reference: str, first: bool) -> str:
        st = self.tracker.state(d).slots
        if d == TRAIN:
            n = st.get("people", "")
            what = f"{n} ticket{'s' if n != '1' else ''} on {R.describe(d, row)}"
        elif d == RESTAURANT:
            what = (f"a table for {st.get('people')} at {row.get('name')} on {st.get('day')} "
                    f"at {st.get('time')}")  # fmt: skip
        else:
            n = st.get("people", "")
            what = (f"{row.get('name')} for {n} {'person' if n == '1' else 'people'}, "
                    f"{st.get('stay')} night{'s' if st.get('stay') != '1' else ''} from "
                    f"{st.get('day')}")  # fmt: skip
        verb = "I have booked" if first else "I have updated your booking:"
        text = f"{verb} {what}. Your reference number is {reference}."
        p = self.progress[d]
        if d != TRAIN and p.described != row:
            text += " " + R.describe_sentence(d, row)
            p.described = dict(row)
        todo = [a for a in self.tracker.state(d).requested if a != "reference"]
        key = _row_key(d, row)
        new = [a for a in todo if f"{key}:{a}" not in self.progress[d].answered]
        if new:
            extra = R.attribute_text(d, row, new)
            if extra:
                text += " " + extra
            self.progress[d].answered.update(f"{key}:{a}" for a in new)
        return text

    def _finish(self) -> ToolCall:
        parsed = self.last_parse
        if not self.parts:
            open_domains = [d for d in self.tracker.order if d in DOMAINS and not self._finished(d)]
            if parsed is not None and ("thank" in parsed.acts or "bye" in parsed.acts):
                self.parts.append("You're welcome! Is there anything else I can help you with?")
            elif open_domains:
                self.parts.append("Could you tell me a bit more about what you need?")
            elif self.tracker.order:
                self.parts.append("Is there anything else I can help you with?")
            else:
                self.parts.append(
                    "Hello! I can help you find and book a restaurant, a hotel or a train. "
                    "What do you need?"
                )
        elif not [d for d in self.tracker.order if d in DOMAINS and not self._finished(d)]:
            self.parts.append("Is there anything else I can help you with?")
        self.tracker.expect(self.asked_now)
        message = " ".join(self.parts)
        self.parts = []
        return ToolCall(name="followup", arguments={"message": message})
