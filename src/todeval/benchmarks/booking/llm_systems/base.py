"""Shared plumbing of the booking LLM systems: the chat history of a tool-calling system,
DB and booking results as the model reads them, and a model reply as a system output.

Model calls go through :func:`todeval.backends.sampling.generate_accounted` with the run's
:class:`~todeval.backends.sampling.Sampling`; the generic chat history is
:class:`todeval.dialogue.chat.ToolChat`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Self

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, GenerationResult, ToolCallOut
from todeval.benchmarks.booking.llm_systems.prompts import default_prompts
from todeval.benchmarks.booking.messages import (
    BookingResult,
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserMessage,
)
from todeval.core.records import CallUsage
from todeval.dialogue.chat import ToolChat
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

MAIN_ROLE = "system"


def compact_json(value: Any) -> str:
    """JSON without spaces (what the models see of rows and results)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def system_model(options: PlayerOptions, system: str) -> Backend:
    """The main model of ``system``; a one-line usage error when none was configured."""
    return options.require_model(f"the {system} system", "--system-model")


def module_model(options: PlayerOptions, system: str) -> Backend:
    """The model of the sub-modules: ``options.module_model``, else the main model."""
    return options.module_model or system_model(options, system)


def sampling_of(options: PlayerOptions) -> Sampling:
    return Sampling(options.constrained, options.temperature, options.max_tokens)


def result_content(observation: DbResult | BookingResult) -> str:
    """A DB or booking result as the compact JSON a model reads."""
    if isinstance(observation, DbResult):
        return compact_json(
            {"total": observation.total, "rows": observation.rows, "message": observation.message}
        )
    return compact_json(
        {"ok": observation.ok, "reference": observation.reference, "message": observation.message}
    )


def output_for(
    call: ToolCallOut | None,
    text: str,
    usage: list[CallUsage],
    more: list[ToolCallOut] | None = None,
) -> SystemOutput:
    """The system output for a model reply: its first tool call (raw arguments) or its text;
    ``more`` are the reply's further calls (passed on when the game master queues calls)."""
    if call is None:
        return SystemOutput(text=text, usage=usage)
    return SystemOutput(
        tool_call=ToolCall(name=call.name, arguments=call.arguments),
        more_calls=[ToolCall(name=c.name, arguments=c.arguments) for c in more or []],
        text=text or None,
        usage=usage,
    )


class BookingChat(ToolChat):
    """A tool-calling system's chat history, fed with the game master's observations."""

    def observe(self, observation: Observation) -> None:
        """Append one observation of the game master."""
        if isinstance(observation, UserMessage):
            self.user(observation.text)
        elif isinstance(observation, DbResult | BookingResult):
            self.answer(result_content(observation))
        else:
            self.answer(
                f"Your last reply was not a valid action ({observation.reason}). "
                "Reply with exactly one valid tool call."
            )


class ToolCallingSystem:
    """One LLM that holds the whole dialogue in a :class:`BookingChat` and acts through tools.

    A subclass names its ``template`` (its instructions) and ``player`` name; :meth:`call` makes
    one accounted model call over the chat with ``self.tools`` and records the reply.
    """

    template: ClassVar[str]
    player: ClassVar[str]
    passes_all_calls: ClassVar[bool] = False
    """True for a system whose outputs carry every call of a reply (see :meth:`further_calls`)."""

    def __init__(
        self,
        *,
        model: Backend,
        generation: Sampling | None = None,
        prompts: PromptSet | None = None,
    ) -> None:
        self.model = model
        self.generation = generation or Sampling()
        self.instructions = (prompts or default_prompts()).render(self.template)
        self.chat = BookingChat(self.instructions)
        self.tools: list[dict[str, Any]] = []
        self.seed = 0
        self.queues_calls = False

    @classmethod
    def from_options(cls, options: PlayerOptions) -> Self:
        return cls(
            model=system_model(options, cls.player),
            generation=sampling_of(options),
            prompts=options.prompts,
        )

    def restart(self, context: SystemContext) -> None:
        """A fresh chat for a new episode."""
        self.chat = BookingChat(self.instructions)
        self.seed = context.seed
        self.queues_calls = context.queues_calls and self.passes_all_calls

    def observe(self, observation: Observation) -> None:
        """The result of a queued call (the game master plays it without a model call)."""
        self.chat.observe(observation)

    def further_calls(self, result: GenerationResult) -> list[ToolCallOut]:
        """The reply's calls after the first, when the game master plays them all."""
        return list(result.tool_calls[1:]) if self.queues_calls else []

    async def call(self, usage: list[CallUsage]) -> tuple[GenerationResult, ToolCallOut | None]:
        """One model call over the chat; the reply and its first tool call (now open)."""
        request = self.generation.request(
            list(self.chat.messages), seed=self.seed, tools=self.tools
        )
        result = await generate_accounted(self.model, request, role=MAIN_ROLE, usage=usage)
        return result, self.chat.record(result, keep_all=self.queues_calls)
