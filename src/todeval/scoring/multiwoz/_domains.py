"""Active domains per turn: where the Inform/Success rules look for offers and requestables.

Three sources (``--active-domains``):

* ``given`` -- the prediction file's own ``active_domains``, estimated from state changes for
  turns that have none;
* ``state`` -- always estimated from state changes (ignores the file's own);
* ``placeholders`` -- the domains named by slot-prefixed placeholders of the raw response
  (``[restaurant_name]`` -> restaurant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from todeval.scoring.multiwoz._normalize import State, placeholder_domains

ActiveDomainsMode = Literal["given", "state", "placeholders"]
ACTIVE_DOMAIN_MODES: tuple[ActiveDomainsMode, ...] = ("given", "state", "placeholders")
ALL_DOMAINS = frozenset(
    {"restaurant", "hotel", "attraction", "train", "taxi", "police", "hospital"}
)


_MISSING = object()


def _changed_domains(state: State, previous: State) -> list[str]:
    """Domains (in the state's order) that gained a (slot, value) pair since ``previous``."""
    changed = []
    for domain, slots in state.items():
        before = previous.get(domain, {})
        if any(before.get(slot, _MISSING) != value for slot, value in slots.items()):
            changed.append(domain)
    return changed


def estimate_from_states(states: Sequence[State]) -> list[list[str]]:
    """One current domain per turn, following the domain whose state changed.

    When several domains change, the current one stays if it changed, else the changed domain
    with most filled slots takes over. When nothing changes after a multi-domain turn, the
    other previously changed domain (if still in the state) takes over. Before the first change
    there is no active domain.
    """
    current: str | None = None
    previous: State = {}
    previous_changed: list[str] = []
    estimates: list[list[str]] = []
    for state in states:
        changed = _changed_domains(state, previous)
        if not changed:
            if current is None:
                estimates.append([])
                continue  # the reference state is kept as it was
            if len(previous_changed) > 1:
                previous_changed = [d for d in previous_changed if d in state and d != current]
                if previous_changed:
                    current = previous_changed[0]
        elif current not in changed:
            current = max(changed, key=lambda d: len(state[d]))
        previous = state
        previous_changed = changed
        estimates.append([current] if current is not None else [])
    return estimates


def from_placeholders(responses: Sequence[str]) -> list[list[str]]:
    """Domains named by slot-prefixed placeholders in each raw response."""
    return [placeholder_domains(r, ALL_DOMAINS) for r in responses]


def active_domains(
    mode: ActiveDomainsMode,
    responses: Sequence[str],
    states: Sequence[State],
    given: Sequence[list[str] | None],
) -> tuple[list[list[str]], int]:
    """Active domains per turn and how many turns were estimated from state changes."""
    if mode == "placeholders":
        return from_placeholders(responses), 0
    if mode == "given" and all(g is not None for g in given):
        return [list(g) for g in given if g is not None], 0
    estimated = estimate_from_states(states)
    if mode == "state":
        return estimated, len(estimated)
    merged = [list(g) if g is not None else e for g, e in zip(given, estimated, strict=True)]
    return merged, sum(g is None for g in given)
