"""``modular-llm``: an LLM dialogue manager that routes to the modules through a tool.

The dialogue manager (DM) holds the dialogue like ``monolithic`` and has the seven tools plus
``callmodule`` (module ``intent`` | ``slots`` | ``followup``, an ``input`` text, and a
``domain`` for ``slots``). A ``callmodule`` call is executed inside :meth:`respond`: the
module's reply (compact JSON when it parsed, else the raw text with the reason) goes back to
the DM as the tool result and the DM is asked again. The first call of any other tool (or a
reply without one) ends :meth:`respond` and goes to the game master.

At most :data:`MAX_HOPS` module calls are run per user turn (counted across the turn's DB and
booking steps); a further ``callmodule`` is returned as text naming the cap, which the game
master records as a format violation.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, ToolCallOut
from todeval.benchmarks.booking.llm_systems.base import (
    MAIN_ROLE,
    BookingChat,
    compact_json,
    module_model,
    output_for,
    sampling_of,
    system_model,
)
from todeval.benchmarks.booking.llm_systems.modules import (
    MODULE_NAMES,
    DialogueModules,
    ModuleOutput,
)
from todeval.benchmarks.booking.llm_systems.prompts import default_prompts, join_or
from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    UserMessage,
)
from todeval.benchmarks.booking.tasks import BOOKING_DOMAINS
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core import safejson
from todeval.core.records import CallUsage
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

MAX_HOPS = 10
ROUTER = "callmodule"


def router_parameters(entities: tuple[str, ...]) -> dict[str, Any]:
    """``callmodule``'s arguments in a world of ``entities``."""
    return {
        "type": "object",
        "properties": {
            "module": {
                "type": "string",
                "enum": list(MODULE_NAMES),
                "description": "intent, slots or followup",
            },
            "input": {"type": "string", "description": "the text the module works on"},
            "domain": {
                "type": "string",
                "enum": list(entities),
                "description": "the domain (needed for slots)",
            },
        },
        "required": ["module", "input"],
        "additionalProperties": False,
    }


def router_tool(entities: tuple[str, ...]) -> dict[str, Any]:
    """The ``callmodule`` tool in a world of ``entities``."""
    return {
        "type": "function",
        "function": {
            "name": ROUTER,
            "description": "Run a helper module (intent, slots or followup) on a text; returns "
            "its result. Does not end your turn.",
            "parameters": router_parameters(entities),
        },
    }


ROUTER_PARAMETERS = router_parameters(BOOKING_DOMAINS)
ROUTER_TOOL = router_tool(BOOKING_DOMAINS)
"""MultiWOZ's (restaurant, hotel, train)."""


def _module_result(output: ModuleOutput) -> str:
    if output.value is not None:
        return compact_json(output.value)
    return f"The module's reply was unusable ({output.error}): {output.raw}"


class ModularLLMSystem:
    """An LLM dialogue manager routing to the intent, slots and follow-up modules."""

    def __init__(
        self,
        *,
        model: Backend,
        modules_model: Backend | None = None,
        generation: Sampling | None = None,
        max_hops: int = MAX_HOPS,
        prompts: PromptSet | None = None,
    ) -> None:
        self.model = model
        self.modules_model = modules_model or model
        self.generation = generation or Sampling()
        self.max_hops = max_hops
        self.prompts = prompts or default_prompts()
        self.chat = BookingChat(self.prompts.render("modular_llm"))
        self.tools: list[dict[str, Any]] = []
        self.seed = 0
        self.hops = 0

    @classmethod
    def from_options(cls, options: PlayerOptions) -> ModularLLMSystem:
        return cls(
            model=system_model(options, "modular-llm"),
            modules_model=module_model(options, "modular-llm"),
            generation=sampling_of(options),
            prompts=options.prompts,
        )

    async def start(self, context: SystemContext) -> None:
        self.chat = BookingChat(self.prompts.render("modular_llm"))
        self.entities = world_of(context.task_set).entities
        self.tools = [*context.tools, router_tool(self.entities)]
        self.router = jsonschema.Draft202012Validator(router_parameters(self.entities))
        self.seed = context.seed
        self.hops = 0
        self.modules = DialogueModules(
            self.modules_model, self.generation, context.task_set, context.seed, self.prompts
        )

    async def respond(self, observation: Observation) -> SystemOutput:
        if isinstance(observation, UserMessage):
            self.hops = 0
        self.chat.observe(observation)
        usage: list[CallUsage] = []
        while True:
            request = self.generation.request(
                list(self.chat.messages), seed=self.seed, tools=self.tools
            )
            result = await generate_accounted(self.model, request, role=MAIN_ROLE, usage=usage)
            call = self.chat.record(result)
            if call is None or call.name.strip().lower() != ROUTER:
                return output_for(call, result.text, usage)
            if self.hops >= self.max_hops:
                return SystemOutput(
                    text=f"routing cap: more than {self.max_hops} module calls in one user "
                    f"turn; last: {call.name}({call.arguments})",
                    usage=usage,
                )
            self.hops += 1
            self.chat.answer(await self._route(call, usage))

    async def _route(self, call: ToolCallOut, usage: list[CallUsage]) -> str:
        """Run the module a ``callmodule`` call asks for; its result text for the DM."""
        try:
            arguments: Any = safejson.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"Error: the arguments are not valid JSON ({exc.msg})."
        if not isinstance(arguments, dict):
            return "Error: the arguments must be a JSON object."
        error = jsonschema.exceptions.best_match(self.router.iter_errors(arguments))
        if error is not None:
            return f"Error: invalid arguments: {error.message}."
        module, text = arguments["module"], str(arguments["input"])
        if module == "intent":
            return _module_result(await self.modules.intent(text, usage))
        if module == "followup":
            return _module_result(await self.modules.followup(text, usage))
        domain = arguments.get("domain")
        if domain is None:
            return f"Error: the slots module needs a domain ({join_or(self.entities)})."
        return _module_result(await self.modules.slots(str(domain), text, usage))
