"""Inform and Success of one dialogue (the standard evaluator's rules).

For every turn and every goal domain that is active in that turn:

* if the normalised response mentions ``NAME`` (restaurant, hotel, attraction) or ``TRAINID``
  (train), the offered venues are the database matches of the turn's state for that domain;
  a new offer replaces the previous one unless every previously offered venue is still among
  the new matches;
* a requestable (``PHONE``, ``ADDRESS``, ``POST``, ``REFERENCE``, ``TRAINID``) counts as
  provided when its placeholder appears -- ``REFERENCE`` only while the domain is booked.

Inform holds for a domain when the goal names the venue, the domain is taxi/police/hospital,
the domain is train with nothing offered and no TRAINID requested, or something was offered and
every offered venue matches the goal's constraints. Success needs Inform in every domain and
every requested attribute provided in every domain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from todeval.scoring.multiwoz._corpus import REQUESTABLES, DomainGoal
from todeval.scoring.multiwoz._database import VENUE_DOMAINS, VenueDatabase
from todeval.scoring.multiwoz._normalize import State

_NO_DATABASE = frozenset({"taxi", "police", "hospital"})
_NAME_DOMAINS = frozenset({"restaurant", "hotel", "attraction"})


@dataclass(frozen=True)
class DialogueOutcome:
    """Per-domain Inform and Success of one dialogue (Success is False where Inform failed)."""

    inform: dict[str, bool]
    success: dict[str, bool]
    provided: dict[str, frozenset[str]]
    offered: dict[str, frozenset[str] | None]

    @property
    def inform_total(self) -> bool:
        return all(self.inform.values())

    @property
    def success_total(self) -> bool:
        return self.inform_total and all(self.success.values())


def _mentions_venue(domain: str, response: str) -> bool:
    if domain == "train":
        return "TRAINID" in response
    return domain in _NAME_DOMAINS and "NAME" in response


def score_dialogue(
    goal: Mapping[str, DomainGoal],
    booked: Sequence[frozenset[str]],
    responses: Sequence[str],
    states: Sequence[State],
    active: Sequence[Sequence[str]],
    database: VenueDatabase,
) -> DialogueOutcome:
    """Inform and Success of one dialogue from its normalised responses and states.

    Only the given turns count (``zip`` stops at the shortest sequence).
    """
    offered: dict[str, frozenset[str]] = {d: frozenset() for d in goal}
    provided: dict[str, set[str]] = {d: set() for d in goal}
    for response, state, booked_now, domains in zip(
        responses, states, booked, active, strict=False
    ):
        for domain in goal:
            if domain not in domains:
                continue
            if _mentions_venue(domain, response):
                slots = state.get(domain)
                matches = database.query(domain, slots) if slots is not None else frozenset()
                previous = offered[domain]
                if not previous or not previous <= matches:
                    offered[domain] = matches
            for slot in REQUESTABLES:
                if slot not in response:
                    continue
                if slot != "REFERENCE" or domain in booked_now:
                    provided[domain].add(slot)

    inform: dict[str, bool] = {}
    final_offer: dict[str, frozenset[str] | None] = {}
    for domain, domain_goal in goal.items():
        automatic = (
            "name" in domain_goal.informable
            or domain in _NO_DATABASE
            or (
                domain == "train"
                and not offered[domain]
                and "TRAINID" not in domain_goal.requestable
            )
        )
        if automatic:
            inform[domain] = True
            final_offer[domain] = None
            continue
        final_offer[domain] = offered[domain]
        inform[domain] = (
            domain in VENUE_DOMAINS
            and bool(offered[domain])
            and offered[domain] <= database.query(domain, domain_goal.informable)
        )

    every_inform = all(inform.values())
    success = {
        domain: every_inform and domain_goal.requestable <= provided[domain]
        for domain, domain_goal in goal.items()
    }
    return DialogueOutcome(
        inform=inform,
        success=success,
        provided={d: frozenset(p) for d, p in provided.items()},
        offered=final_offer,
    )
