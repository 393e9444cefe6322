"""Single-turn LLM modules shared by ``modular-prog`` and ``modular-llm``.

* **intent** -> ``{"intent": label, "domain": <an entity of the world>|donotcare}``
  (MultiWOZ: restaurant, hotel, train);
* **slots** (per domain) -> the domain's slots the user asked for, keys and value formats from
  the booking tool's parameters (contact attributes left out);
* **followup** -> ``{"message": text}``: the next message to the user.

Each module makes one model call with its own usage role (``system.intent``, ``system.slots``,
``system.followup``) and parses the reply strictly: one JSON object (a fenced ```json block is
accepted) that matches the module's schema; ``null`` slot values count as "not mentioned". A reply
that does not is returned as a failed :class:`ModuleOutput` carrying the raw text, so the caller
can surface it as a format violation.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks.booking.llm_systems.prompts import default_prompts, slots_prompt
from todeval.benchmarks.booking.tasks import BOOKING_DOMAINS
from todeval.benchmarks.booking.world.model import World
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core import safejson
from todeval.core.records import CallUsage
from todeval.dialogue.prompts import PromptSet

ModuleName = Literal["intent", "slots", "followup"]
MODULE_NAMES: tuple[ModuleName, ...] = ("intent", "slots", "followup")
INTENTS = (
    "booking-request",
    "booking-success",
    "booking-failure",
    "dbretrieval-request",
    "dbretrieval-success",
    "dbretrieval-failure",
    "detection-unknown",
)
ANY_DOMAIN = "donotcare"


def intent_schema(entities: tuple[str, ...]) -> dict[str, Any]:
    """The intent module's reply schema in a world of ``entities``."""
    return {
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": list(INTENTS)},
            "domain": {"type": "string", "enum": [*entities, ANY_DOMAIN]},
        },
        "required": ["intent", "domain"],
        "additionalProperties": False,
    }


INTENT_SCHEMA = intent_schema(BOOKING_DOMAINS)
"""MultiWOZ's (restaurant, hotel, train)."""
FOLLOWUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "minLength": 1}},
    "required": ["message"],
    "additionalProperties": False,
}
_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def slot_schema(world: World | str, domain: str) -> dict[str, Any]:
    """The slots of ``domain`` a user can give: the booking tool's parameters, all optional
    (``world``: a world or a task set's name)."""
    w = world_of(world) if isinstance(world, str) else world
    params = w.tool_parameters()[w.booking_tool(domain)]
    properties = {
        key: copy.deepcopy(prop)
        for key, prop in params["properties"].items()
        if key not in w.optional_attributes[domain]
    }
    return {"type": "object", "properties": properties, "additionalProperties": False}


@dataclass(frozen=True)
class ModuleOutput:
    """A module's reply: ``value`` when it parsed and matched the schema, else ``error``."""

    module: str
    role: str
    raw: str
    value: dict[str, Any] | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None

    def failure_text(self) -> str:
        """The raw reply labelled with its module, as recorded for a format violation."""
        return f"[{self.role}: {self.error}] {self.raw}"


def parse_module_reply(
    raw: str, validator: jsonschema.protocols.Validator, *, drop_nulls: bool = False
) -> tuple[dict[str, Any] | None, str | None]:
    """``(value, None)`` for a reply that is one JSON object matching the schema, else an error."""
    text = raw.strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = safejson.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    if drop_nulls:
        value = {k: v for k, v in value.items() if v is not None}
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "reply"
        return None, f"schema violation at {where}: {error.message}"
    return value, None


class DialogueModules:
    """The intent, slots and follow-up modules of one episode."""

    def __init__(
        self,
        backend: Backend,
        generation: Sampling,
        task_set: str,
        seed: int,
        prompts: PromptSet | None = None,
    ) -> None:
        self.backend = backend
        self.generation = generation
        self.prompts = prompts or default_prompts()
        self.seed = seed
        world = world_of(task_set)
        self.intent_schema = intent_schema(world.entities)
        self.slot_schemas = {d: slot_schema(world, d) for d in world.entities}
        self._validators = {
            "intent": jsonschema.Draft202012Validator(self.intent_schema),
            "followup": jsonschema.Draft202012Validator(FOLLOWUP_SCHEMA),
            **{
                f"slots.{d}": jsonschema.Draft202012Validator(s)
                for d, s in self.slot_schemas.items()
            },
        }

    async def _run(
        self,
        module: str,
        key: str,
        instructions: str,
        content: str,
        schema: dict[str, Any],
        usage: list[CallUsage],
    ) -> ModuleOutput:
        role = f"system.{module}"
        request = self.generation.request(
            [
                ChatMessage(role="system", content=instructions),
                ChatMessage(role="user", content=content),
            ],
            seed=self.seed,
            schema=schema,
        )
        result = await generate_accounted(self.backend, request, role=role, usage=usage)
        value, error = parse_module_reply(
            result.text, self._validators[key], drop_nulls=module == "slots"
        )
        return ModuleOutput(module=module, role=role, raw=result.text, value=value, error=error)

    async def intent(self, content: str, usage: list[CallUsage]) -> ModuleOutput:
        """Classify the latest message of ``content`` (a transcript or a text)."""
        instructions = self.prompts.render("intent")
        schema = self.intent_schema
        return await self._run("intent", "intent", instructions, content, schema, usage)

    async def slots(self, domain: str, content: str, usage: list[CallUsage]) -> ModuleOutput:
        """Extract ``domain`` slots from ``content``; values are strings in the tool formats."""
        schema = self.slot_schemas[domain]
        instructions = slots_prompt(self.prompts, domain, schema)
        return await self._run("slots", f"slots.{domain}", instructions, content, schema, usage)

    async def followup(self, content: str, usage: list[CallUsage]) -> ModuleOutput:
        """Draft the next message to the user from a description of the situation."""
        instructions = self.prompts.render("followup")
        return await self._run(
            "followup", "followup", instructions, content, FOLLOWUP_SCHEMA, usage
        )
