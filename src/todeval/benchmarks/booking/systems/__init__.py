"""Offline dialogue systems for the booking benchmark (no model).

* :class:`RuleSystem` — a rule-based baseline: slot tracker + DB-driven policy + templates.
* :class:`SlotTracker` — its state tracker, usable on its own.
"""

from todeval.benchmarks.booking.systems.nlu import SlotValue, TurnParse, parse_turn
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.booking.systems.tracker import DomainState, SlotTracker
from todeval.benchmarks.booking.systems.tracker_eval import SlotScores, evaluate_tracker

__all__ = [
    "DomainState",
    "RuleSystem",
    "SlotScores",
    "SlotTracker",
    "SlotValue",
    "TurnParse",
    "evaluate_tracker",
    "parse_turn",
]
