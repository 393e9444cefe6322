"""The shipped MultiWOZ test-set files the scorer needs (package data ``multiwoz/corpus``).

Each file is read on first use and kept by the :class:`CorpusData` instance (never globally).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from todeval.scoring.multiwoz._normalize import State

REQUESTABLES = ("PHONE", "ADDRESS", "POST", "REFERENCE", "TRAINID")


@dataclass(frozen=True)
class DomainGoal:
    """A user's goal in one domain: search constraints and requested attributes."""

    informable: dict[str, str]
    requestable: frozenset[str]


def _read(name: str) -> Any:
    node = resources.files("todeval") / "data" / "multiwoz" / "corpus" / f"{name}.json.gz"
    return json.loads(gzip.decompress(node.read_bytes()).decode("utf-8"))


class CorpusData:
    """Goals, booked domains, BLEU references and gold states of the 1000 test dialogues."""

    def __init__(self) -> None:
        self._goals: dict[str, dict[str, DomainGoal]] | None = None
        self._booked: dict[str, list[frozenset[str]]] | None = None
        self._references: dict[str, list[str]] | None = None
        self._tokenized: dict[str, list[str]] | None = None
        self._gold_states: dict[str, list[State]] | None = None

    @property
    def goals(self) -> dict[str, dict[str, DomainGoal]]:
        """Dialogue id -> domain -> goal (domains in the goal's order)."""
        if self._goals is None:
            raw: dict[str, dict[str, dict[str, Any]]] = _read("goals_test")
            self._goals = {
                dialogue: {
                    domain: DomainGoal(
                        informable=dict(goal["informable"]),
                        requestable=frozenset(goal["requestable"]),
                    )
                    for domain, goal in domains.items()
                }
                for dialogue, domains in raw.items()
            }
        return self._goals

    @property
    def booked_domains(self) -> dict[str, list[frozenset[str]]]:
        """Dialogue id -> per system turn, the domains booked so far."""
        if self._booked is None:
            raw: dict[str, list[list[str]]] = _read("booked_domains_test")
            self._booked = {k: [frozenset(t) for t in v] for k, v in raw.items()}
        return self._booked

    @property
    def references(self) -> dict[str, list[str]]:
        """Dialogue id -> normalised MultiWOZ 2.2 reference response per system turn."""
        if self._references is None:
            self._references = _read("references_test_mwz22")
        return self._references

    @property
    def tokenized_references(self) -> dict[str, list[str]]:
        """The references in sacrebleu's 13a tokenisation (tokens joined by single spaces),
        shipped precomputed (``references_test_mwz22_13a``; a test recomputes it)."""
        if self._tokenized is None:
            self._tokenized = _read("references_test_mwz22_13a")
        return self._tokenized

    @property
    def gold_states(self) -> dict[str, list[State]]:
        """Dialogue id -> normalised MultiWOZ 2.2 gold dialogue state per system turn."""
        if self._gold_states is None:
            self._gold_states = _read("gold_states_test_mwz22")
        return self._gold_states

    def n_turns(self, dialogue_id: str) -> int:
        """Number of system turns of a test dialogue."""
        return len(self.booked_domains[dialogue_id])
