"""Turn a booking task into the user's plan: domains in the order the goal text names them,
and per domain the constraints and booking slots to try first and those to fall back to.

MultiWOZ goal semantics: ``fail_info`` / ``fail_book`` hold the values a user tries first (they
fail in the original dialogue), ``info`` / ``book`` the values that finally succeed. The goal
*message* states a fallback in words ("If there is no such hotel, how about ...", "If the
booking fails how about ..."). Some goals carry ``fail_*`` values the message never states (for
example a ``fail_info.name`` left over from the corpus dialogue); with ``fallbacks="message"``
those are ignored, so the simulator says what an LLM user reading the same message would say.
With ``fallbacks="goal"`` every ``fail_*`` value is tried first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from todeval.benchmarks.booking.tasks import BookingTask

Fallbacks = Literal["message", "goal"]

# Words that mark where the goal text starts talking about a domain.
_DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "restaurant": ("restaurant", "place to dine", "place to eat", "a table", "dine"),
    "hotel": ("hotel", "place to stay", "guest house", "guesthouse", "nights"),
    "train": ("train", "travel by"),
}
# An introductory line of some goals that mentions restaurants without asking for one.
_INTRO = re.compile(r"looking forward to try(ing)? local restaurants")
_SENTENCE = re.compile(r"[^.\n]+")
_OPENER = re.compile(r"\b(looking for|want to (travel|book)|i want|i need|i would like)\b")
_NO_SUCH = re.compile(r"no such (restaurant|hotel|train)")


@dataclass(frozen=True)
class DomainPlan:
    """What the user wants in one booking domain."""

    domain: str
    first_info: dict[str, str]
    final_info: dict[str, str]
    first_book: dict[str, str]
    final_book: dict[str, str]
    reqt: tuple[str, ...]

    @property
    def info_changes(self) -> dict[str, str]:
        """Constraints that change when the user falls back (slot -> final value)."""
        return {k: v for k, v in self.final_info.items() if self.first_info.get(k) != v}

    @property
    def book_changes(self) -> dict[str, str]:
        """Booking slots that change when the user falls back (slot -> final value)."""
        return {k: v for k, v in self.final_book.items() if self.first_book.get(k) != v}


def _mentions(text: str, domain: str, extra: tuple[str, ...] = ()) -> int | None:
    positions = [text.find(w) for w in (*_DOMAIN_WORDS[domain], *extra)]
    found = [p for p in positions if p >= 0]
    return min(found) if found else None


def domain_order(task: BookingTask) -> list[str]:
    """The task's booking domains in the order its goal message first names them."""
    text = _INTRO.sub("", task.message.lower())
    index = {d: i for i, d in enumerate(task.booking_domains)}

    def key(domain: str) -> tuple[int, int]:
        goal = task.domains[domain]
        extra = tuple(v for k, v in goal.info.items() if k == "type")
        pos = _mentions(text, domain, extra)
        return (pos if pos is not None else len(text) + 1, index[domain])

    return sorted(task.booking_domains, key=key)


def _first_domain_in(sentence: str, domains: list[str]) -> str | None:
    best: tuple[int, str] | None = None
    for d in domains:
        pos = _mentions(sentence, d)
        if pos is not None and (best is None or pos < best[0]):
            best = (pos, d)
    return best[1] if best else None


def stated_fallbacks(task: BookingTask) -> dict[str, set[str]]:
    """Which fallbacks the goal message states, per domain: subsets of {"info", "book"}.

    "If there is no such <domain>" names its domain; "If the booking fails" belongs to the
    domain whose section (opened by a "looking for ..." sentence) it appears in.
    """
    text = _INTRO.sub("", task.message.lower())
    domains = task.booking_domains
    out: dict[str, set[str]] = {d: set() for d in domains}
    current = domains[0] if len(domains) == 1 else None
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0)
        no_such = _NO_SUCH.search(sentence)
        if no_such and no_such.group(1) in out:
            out[no_such.group(1)].add("info")
            continue
        if _OPENER.search(sentence):
            current = _first_domain_in(sentence, domains) or current
        if "booking fails" in sentence and current is not None:
            out[current].add("book")
    return out


def plan_goal(task: BookingTask, fallbacks: Fallbacks = "message") -> list[DomainPlan]:
    """One :class:`DomainPlan` per booking domain, in the order the goal message names them."""
    stated = stated_fallbacks(task)
    plans = []
    for domain in domain_order(task):
        goal = task.domains[domain]
        use_info = fallbacks == "goal" or "info" in stated[domain]
        use_book = fallbacks == "goal" or "book" in stated[domain]
        first_info = {**goal.info, **goal.fail_info} if use_info else dict(goal.info)
        first_book = {**goal.book, **goal.fail_book} if use_book else dict(goal.book)
        plans.append(
            DomainPlan(
                domain=domain,
                first_info=first_info,
                final_info=dict(goal.info),
                first_book=first_book,
                final_book=dict(goal.book),
                reqt=tuple(goal.reqt),
            )
        )
    return plans
