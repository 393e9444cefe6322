"""The booking benchmark's roles: the system under test and the user simulator.

Built-in players are named here; any other ``package.module:Class`` reference is imported on
demand, so users can plug in their own system without editing todeval.
"""

from __future__ import annotations

from todeval.benchmarks.booking.llm_systems import LLM_SYSTEMS
from todeval.benchmarks.booking.messages import BookingSystem, UserSimulator, system_view
from todeval.dialogue.participants import Role
from todeval.dialogue.views import same_view

_CONTROLS = "todeval.benchmarks.booking.systems.controls"
SYSTEMS: dict[str, str] = {
    "rule": "todeval.benchmarks.booking.systems.rule:RuleSystem",
    **LLM_SYSTEMS,
    # controls (docs/validation.md): no skill, or the goal in hand (privileged)
    "silent": f"{_CONTROLS}:SilentSystem",
    "echo": f"{_CONTROLS}:EchoSystem",
    "first-row": f"{_CONTROLS}:FirstRowSystem",
    "copy-example": f"{_CONTROLS}:CopyExampleSystem",
    "oracle": f"{_CONTROLS}:OracleSystem",
    # the skill-less family todeval validate searches (parameters: the config's adversary)
    "adversary": "todeval.benchmarks.booking.adversaries:AdversarySystem",
}
USERS: dict[str, str] = {
    "agenda": "todeval.benchmarks.booking.users.agenda:AgendaUser",
    "corpus": "todeval.benchmarks.booking.users.corpus:CorpusUser",
    "llm": "todeval.benchmarks.booking.llm_user:LLMUser",
    "human": "todeval.benchmarks.booking.users.human:HumanUser",
    "replay": "todeval.benchmarks.booking.users.replay:ReplayUser",
}

SYSTEM_BACKEND = (
    "multiwoz/schema.json",
    "multiwoz/ontology.json",
    "multiwoz/db",
    "multiwoz/packs",
    "domains/*/domain.yaml",
    "domains/*/*.csv",
)
"""What an isolated system may read of the package's data: its world (schema, databases,
packs), never a goal (``booking_tasks``, the corpus, a pack's ``tasks.json``)."""
SYSTEM: Role[BookingSystem] = Role(
    "system", "system", BookingSystem, SYSTEMS, view=system_view, public_data=SYSTEM_BACKEND
)
# the user's view is its own goal: the UserContext is built for the user alone
USER: Role[UserSimulator] = Role("user", "user simulator", UserSimulator, USERS, view=same_view)
