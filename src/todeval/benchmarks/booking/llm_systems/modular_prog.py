"""``modular-prog``: fixed Python control flow over single-turn LLM modules.

On a user message the flow runs **intent detection** and, once a domain is known, **slot
extraction** for that domain over the recent dialogue, and merges the slots into its state.
Python then decides the action:

* ``booking-request`` -> book: search the DB unless a row is chosen, choose the row (the one
  named by the user, else the first), ask for missing booking details (people, day, time or
  nights) or call the booking tool with the row's values, the user's booking details and the
  row's contact attributes;
* ``dbretrieval-request`` -> search with the slots given, then describe the results;
* any other label -> continue the current goal when new slots came in, else just answer.

DB results, booking results and violation notices are handled by Python alone, and every message
to the user is written by the **follow-up** module. Tool calls are built from module outputs; a
module reply that is not valid JSON under its schema is returned as raw text (labelled with the
module), so the game master records a format violation, as for the paper's small models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from todeval.backends.sampling import Sampling
from todeval.backends.types import Backend
from todeval.benchmarks.booking.llm_systems.actions import (
    booking_arguments,
    row_fits,
    search_arguments,
)
from todeval.benchmarks.booking.llm_systems.base import compact_json, module_model, sampling_of
from todeval.benchmarks.booking.llm_systems.modules import DialogueModules, ModuleOutput
from todeval.benchmarks.booking.llm_systems.prompts import (
    default_prompts,
    join_or,
    transcript_text,
)
from todeval.benchmarks.booking.messages import (
    BookingResult,
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserMessage,
)
from todeval.benchmarks.booking.schema import FOLLOWUP
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core.records import CallUsage
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

Goal = Literal["search", "book"]


class _ModuleFailure(Exception):
    def __init__(self, output: ModuleOutput) -> None:
        super().__init__(output.error)
        self.output = output


@dataclass
class _DomainState:
    slots: dict[str, str] = field(default_factory=dict)
    row: dict[str, str] | None = None
    reference: str | None = None


class ModularProgSystem:
    """Python control flow over the intent, slots and follow-up modules."""

    def __init__(
        self,
        *,
        modules_model: Backend,
        generation: Sampling | None = None,
        prompts: PromptSet | None = None,
    ) -> None:
        self.modules_model = modules_model
        self.generation = generation or Sampling()
        self.prompts = prompts or default_prompts()
        self.state: dict[str, _DomainState] = {}
        self.domain: str | None = None
        self.goal: Goal = "search"
        self.lines: list[str] = []

    @classmethod
    def from_options(cls, options: PlayerOptions) -> ModularProgSystem:
        return cls(
            modules_model=module_model(options, "modular-prog"),
            generation=sampling_of(options),
            prompts=options.prompts,
        )

    async def start(self, context: SystemContext) -> None:
        self.modules = DialogueModules(
            self.modules_model, self.generation, context.task_set, context.seed, self.prompts
        )
        self.world = world_of(context.task_set)
        self.state = {d: _DomainState() for d in self.world.entities}
        self.domain = None
        self.goal = "search"
        self.lines = []

    async def respond(self, observation: Observation) -> SystemOutput:
        usage: list[CallUsage] = []
        try:
            if isinstance(observation, UserMessage):
                output = await self._on_user(observation.text, usage)
            elif isinstance(observation, DbResult):
                output = await self._on_db(observation, usage)
            elif isinstance(observation, BookingResult):
                output = await self._on_booking(observation, usage)
            else:
                output = await self._say(
                    "The last step went wrong. Apologise briefly and ask the user to say again "
                    "what they need.",
                    usage,
                )
        except _ModuleFailure as failure:
            return SystemOutput(text=failure.output.failure_text(), usage=usage)
        return output.model_copy(update={"usage": usage})

    # -- module calls --------------------------------------------------------------------------

    @staticmethod
    def _checked(output: ModuleOutput) -> dict[str, Any]:
        if output.value is None:
            raise _ModuleFailure(output)
        return output.value

    async def _say(self, instruction: str, usage: list[CallUsage]) -> SystemOutput:
        content = f"{transcript_text(self.lines)}\n\nWhat to say now: {instruction}"
        value = self._checked(await self.modules.followup(content, usage))
        message = str(value["message"])
        self.lines.append(f"assistant: {message}")
        return SystemOutput(tool_call=ToolCall(name=FOLLOWUP, arguments={"message": message}))

    # -- observations --------------------------------------------------------------------------

    async def _on_user(self, text: str, usage: list[CallUsage]) -> SystemOutput:
        self.lines.append(f"user: {text}")
        transcript = transcript_text(self.lines)
        intent = self._checked(await self.modules.intent(transcript, usage))
        if intent["domain"] in self.world.entities:
            self.domain = str(intent["domain"])
        if self.domain is None:
            needs = join_or(self.world.descriptions[e] for e in self.world.entities)
            return await self._say(f"Ask whether the user needs {needs}, and what kind.", usage)
        domain = self.domain
        slots = self._checked(await self.modules.slots(domain, transcript, usage))
        changed = self._merge(domain, slots)
        label = intent["intent"]
        if label == "booking-request":
            self.goal = "book"
        elif label == "dbretrieval-request":
            self.goal = "search"
        elif not changed:
            return await self._say(f"Answer the user's last message. {self._known(domain)}", usage)
        return await self._advance(domain, usage)

    async def _on_db(self, result: DbResult, usage: list[CallUsage]) -> SystemOutput:
        domain = result.domain
        state = self.state[domain]
        if result.total == 0:
            state.row = None
            return await self._say(
                f"No {domain} matches {compact_json(result.query)}. Tell the user and ask "
                "whether they want to change something.",
                usage,
            )
        if self.goal == "book":
            name = state.slots.get("name", "").lower()
            named = [r for r in result.rows if name and r.get("name", "").lower() == name]
            state.row = (named or result.rows)[0]
            return await self._advance(domain, usage)
        state.row = result.rows[0] if result.total == 1 else None
        shown = "the first of them" if result.total > len(result.rows) else "them"
        return await self._say(
            f"The {domain} search found {result.total} match(es); here are {shown}: "
            f"{compact_json(result.rows)}. Present them briefly and ask the user how to go on "
            "(for example which one, or whether to book).",
            usage,
        )

    async def _on_booking(self, result: BookingResult, usage: list[CallUsage]) -> SystemOutput:
        state = self.state[result.domain]
        if result.ok:
            state.reference = result.reference
            self.goal = "search"
            row = state.row or {}
            details = {k: row[k] for k in self.world.reported[result.domain] if k in row}
            return await self._say(
                f"The {result.domain} is booked, reference number {result.reference}. "
                f"Details: {compact_json(details)}. Give the user the reference number and ask "
                "whether they need anything else.",
                usage,
            )
        state.row = None
        return await self._say(
            f"The {result.domain} booking failed: {result.message} Tell the user and ask how "
            "to go on.",
            usage,
        )

    # -- state and actions ---------------------------------------------------------------------

    def _merge(self, domain: str, values: dict[str, Any]) -> bool:
        """Merge extracted slots; drop the chosen row if it no longer fits. True if changed."""
        state = self.state[domain]
        changed = False
        for key, raw in values.items():
            value = str(raw).strip()
            if value and state.slots.get(key) != value:
                state.slots[key] = value
                changed = True
        if state.row is not None and not row_fits(self.world, domain, state.row, state.slots):
            state.row = None
        return changed

    def _known(self, domain: str) -> str:
        state = self.state[domain]
        text = f"Known {domain} details: {compact_json(state.slots)}."
        if state.reference:
            text += f" Already booked, reference number {state.reference}."
        return text

    async def _advance(self, domain: str, usage: list[CallUsage]) -> SystemOutput:
        state = self.state[domain]
        if self.goal == "search" or state.row is None:
            return self._search(domain)
        missing = [k for k in self.world.booking_details(domain) if k not in state.slots]
        if missing:
            return await self._say(
                f"Ask the user for the booking details still missing: {', '.join(missing)}. "
                f"The {domain} chosen: {compact_json(state.row)}.",
                usage,
            )
        return self._book(domain, state.row)

    def _search(self, domain: str) -> SystemOutput:
        arguments = search_arguments(self.world, domain, self.state[domain].slots)
        tool = self.world.search_tool(domain)
        return SystemOutput(tool_call=ToolCall(name=tool, arguments=arguments))

    def _book(self, domain: str, row: dict[str, str]) -> SystemOutput:
        arguments = booking_arguments(self.world, domain, row, self.state[domain].slots)
        tool = self.world.booking_tool(domain)
        return SystemOutput(tool_call=ToolCall(name=tool, arguments=arguments))
