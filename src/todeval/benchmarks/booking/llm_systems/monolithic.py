"""``monolithic``: one LLM holds the whole dialogue and acts through the seven tools.

Each observation is appended to its chat history (user messages as user turns; DB and booking
results as tool messages answering its previous call, rows as compact JSON); each
:meth:`respond` is one model call, whose first tool call (raw arguments) is the action. A reply
without a tool call is returned as text, which the game master records as a format violation.
Its instructions are the ``monolithic`` prompt template.
"""

from __future__ import annotations

from typing import Any

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend
from todeval.benchmarks.booking.llm_systems._base import (
    MAIN_ROLE,
    BookingChat,
    output_for,
    sampling_of,
    system_model,
)
from todeval.benchmarks.booking.llm_systems.prompts import default_prompts, prompts_of
from todeval.benchmarks.booking.protocol import Observation, SystemContext, SystemOutput
from todeval.core.records import CallUsage
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet


class MonolithicSystem:
    """One LLM with the seven tools."""

    def __init__(
        self,
        *,
        model: Backend,
        generation: Sampling | None = None,
        prompts: PromptSet | None = None,
    ) -> None:
        self.model = model
        self.generation = generation or Sampling()
        self.instructions = (prompts or default_prompts()).render("monolithic")
        self.chat = BookingChat(self.instructions)
        self.tools: list[dict[str, Any]] = []
        self.seed = 0

    @classmethod
    def from_options(cls, options: PlayerOptions) -> MonolithicSystem:
        return cls(
            model=system_model(options, "monolithic"),
            generation=sampling_of(options),
            prompts=prompts_of(options),
        )

    async def start(self, context: SystemContext) -> None:
        self.chat = BookingChat(self.instructions)
        self.tools = context.tools
        self.seed = context.seed

    async def respond(self, observation: Observation) -> SystemOutput:
        self.chat.observe(observation)
        usage: list[CallUsage] = []
        request = self.generation.request(
            list(self.chat.messages), seed=self.seed, tools=self.tools
        )
        result = await generate_accounted(self.model, request, role=MAIN_ROLE, usage=usage)
        call = self.chat.record(result)
        return output_for(call, result.text, usage)
