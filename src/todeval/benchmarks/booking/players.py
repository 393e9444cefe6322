"""The booking benchmark's roles: the system under test and the user simulator.

Built-in players are named here; any other ``package.module:Class`` reference is imported on
demand, so users can plug in their own system without editing todeval.
"""

from __future__ import annotations

from todeval.benchmarks.booking.llm_systems import LLM_SYSTEMS
from todeval.benchmarks.booking.protocol import BookingSystem, UserSimulator
from todeval.dialogue.participants import Role
from todeval.dialogue.views import same_view

SYSTEMS: dict[str, str] = {
    "rule": "todeval.benchmarks.booking.systems.rule:RuleSystem",
    **LLM_SYSTEMS,
}
USERS: dict[str, str] = {
    "agenda": "todeval.benchmarks.booking.users.agenda:AgendaUser",
    "corpus": "todeval.benchmarks.booking.users.corpus:CorpusUser",
    "llm": "todeval.benchmarks.booking.llm_user:LLMUser",
    "human": "todeval.benchmarks.booking.users.human:HumanUser",
    "replay": "todeval.benchmarks.booking.users.replay:ReplayUser",
}

SYSTEM: Role[BookingSystem] = Role("system", "system", BookingSystem, SYSTEMS, view=same_view)
USER: Role[UserSimulator] = Role("user", "user simulator", UserSimulator, USERS, view=same_view)
