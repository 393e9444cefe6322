"""The game master's world: DB search and booking validation for one episode.

Booking validation (the clem:todd rules): the domain must be one of the goal's booking domains;
the mandatory keys must be present; categorical values must be among the schema's possible
values; and a DB lookup with the informable slots given must match **exactly one** row. Then a
6-character reference (A-Z, 0-9, from the episode's RNG) is returned and the booking recorded;
a later successful booking in the same domain replaces the earlier one.
"""

from __future__ import annotations

import random
import string
from typing import Any

from pydantic import BaseModel, Field

from todeval.benchmarks.booking.db import DONTCARE, Condition
from todeval.benchmarks.booking.messages import BookingResult, DbResult
from todeval.benchmarks.booking.tasks import normalise_key
from todeval.benchmarks.booking.world.model import World

REFERENCE_ALPHABET = string.ascii_uppercase + string.digits
_MULTIWOZ_BOOK_KEYS = frozenset({"people", "day", "stay", "time"})
"""MultiWOZ's validator looks these up as booking slots (``<domain>-book<key>``) in every domain,
so a train's day is never checked against the train's values (kept for its worlds)."""


class Booking(BaseModel):
    """A successful booking as recorded for scoring."""

    domain: str
    reference: str
    info: dict[str, str] = Field(description="the booked row's informable slots")
    book: dict[str, str] = Field(description="booking slots given (people, day, time, stay)")
    reqt: dict[str, str] = Field(description="optional attributes the system passed on")
    arguments: dict[str, str] = Field(description="the tool call's arguments as given")


def new_reference(rng: random.Random) -> str:
    return "".join(rng.choice(REFERENCE_ALPHABET) for _ in range(6))


class BookingEnvironment:
    """DB and booking validator for one episode (holds that episode's bookings)."""

    def __init__(
        self,
        world: World,
        booking_domains: list[str],
        rng: random.Random,
        *,
        goal_domains: list[str] | None = None,
    ) -> None:
        self.world = world
        self.db = world.database()
        self.booking_domains = booking_domains
        self.goal_domains = list(booking_domains if goal_domains is None else goal_domains)
        """The goal's domains (``clemtodd`` has a DB for these only)."""
        self.rng = rng
        self.bookings: dict[str, Booking] = {}
        self.generated: dict[str, dict[str, str]] = {}
        """``clemtodd``: per domain, the arguments of its successful bookings merged in order
        (the original's generated slots, which it scores)."""

    def search(self, domain: str, constraints: dict[str, Any]) -> DbResult:
        result = self.db.query(domain, constraints)
        if result.total == 0:
            message = f"No {domain} in the database matches these constraints."
        elif result.total <= len(result.rows):
            message = f"{result.total} {domain} result(s) found."
        else:
            message = (
                f"{result.total} {domain} results match; showing the first {len(result.rows)}. "
                "Add constraints to narrow the search."
            )
        return DbResult(
            domain=domain,
            query={c.column: {"operator": c.operator, "value": c.value} for c in result.conditions},
            rows=result.rows,
            total=result.total,
            message=message,
        )

    def _invalid_values(self, domain: str, slots: dict[str, str]) -> list[str]:
        bad = []
        for key, value in slots.items():
            booking = key in self.world.book_slots[domain]
            if not self.world.from_pack:
                booking = booking or key in _MULTIWOZ_BOOK_KEYS
            allowed = self.world.accepted.get(
                f"{domain}-book{key}" if booking else f"{domain}-{key}"
            )
            if allowed is None or value in DONTCARE:
                continue
            normalised = {self.world.normalise_value(key, v) for v in allowed}
            if value not in normalised:
                bad.append(key)
        return bad

    def _lookup_conditions(self, domain: str, slots: dict[str, str]) -> list[Condition]:
        # A slot the world compares (MultiWOZ's train times) identifies a row by comparison (a
        # booking may give the user's bound); where only "=" is offered (the unrealistic set),
        # it must match exactly.
        ordered = len(self.world.operators) > 1
        compare = self.world.compare.get(domain, {})
        constraints: dict[str, Any] = {}
        for key in self.world.informable[domain]:
            if key not in slots:
                continue
            value = slots[key]
            operator = compare.get(key, "=")
            if ordered and operator != "=":
                constraints[key] = {"operator": operator, "value": value}
            else:
                constraints[key] = value
        return self.db.conditions(domain, constraints)

    def book(self, domain: str, arguments: dict[str, str]) -> BookingResult:
        normalise = self.world.normalise_value
        slots = {normalise_key(k): normalise(normalise_key(k), v) for k, v in arguments.items()}

        def fail(reason: str) -> BookingResult:
            return BookingResult(domain=domain, ok=False, message=f"Booking failed: {reason}")

        if domain not in self.booking_domains:
            return fail(f"booking is not available for {domain} in this dialogue.")
        missing = [k for k in self.world.mandatory[domain] if slots.get(k, "") in DONTCARE]
        if missing:
            return fail(f"missing required values: {', '.join(missing)}.")
        invalid = self._invalid_values(domain, slots)
        if invalid:
            return fail(f"invalid values for: {', '.join(invalid)}.")
        conditions = self._lookup_conditions(domain, slots)
        total, rows = self.db.select_first(domain, conditions, 1)
        if not total:
            return fail(f"no {domain} in the database matches the booking details.")
        if total > 1:
            return fail(
                f"{total} {domain} entries match the booking details; "
                "give details that identify exactly one."
            )
        row = rows[0]
        reference = new_reference(self.rng)
        self.bookings[domain] = Booking(
            domain=domain,
            reference=reference,
            info={k: row[k] for k in self.world.informable[domain] if k in row},
            book={k: slots[k] for k in self.world.book_slots[domain] if k in slots},
            reqt={
                k: slots[k]
                for k in self.world.optional_attributes[domain]
                if slots.get(k, "") not in DONTCARE
            },
            arguments=dict(arguments),
        )
        return BookingResult(
            domain=domain,
            ok=True,
            reference=reference,
            message=f"Booking confirmed. Reference number: {reference}.",
        )
