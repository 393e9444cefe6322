"""``hd-pipeline``: the Hudeček & Dušek (2023) LLM pipeline, rebuilt with todeval's prompts.

Per user message the pipeline makes up to three model calls, each with its own prompt
(``prompts/hd_*.txt``) and usage role:

1. **domain detection** (``system.domain``) -> ``{"domain": <an entity>|none}`` (MultiWOZ:
   restaurant, hotel, train); ``none`` keeps the current domain;
2. **state tracking** (``system.state``) for the current domain -> the domain's slots the user
   has given so far (a JSON object, keys as in the booking tool), merged into the state;
3. **response generation** (``system.response``) from the dialogue, the state, the DB results
   and the booking outcome -> the message text (sent with ``followup``).

Python does the rest, as in the original pipeline: when the searchable part of the state
changed (or nothing was searched yet) it searches the DB with the state; when a venue is known
(the row named in the state, else the first result) and the state holds every booking detail
(people and day, plus time or nights) it books, once per domain (a failed booking is retried
only after the state changed); otherwise it responds.

Few-shot examples (``options.extra["few_shot"]``, default :data:`FEW_SHOT`; ``0`` disables
them) are the MultiWOZ validation turns most similar to the user's message under BM25
(:mod:`.bm25`), where the original uses FAISS over embeddings; a domain pack's world has no
such corpus and plays without examples. A domain or state reply that is
not valid JSON under its schema is returned as raw text, labelled with its role, so the game
master records a format violation; an empty response is one too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks.booking.llm_systems.actions import booking_arguments, search_arguments
from todeval.benchmarks.booking.llm_systems.base import compact_json, module_model, sampling_of
from todeval.benchmarks.booking.llm_systems.bm25 import (
    Example,
    ExampleRetriever,
    default_retriever,
)
from todeval.benchmarks.booking.llm_systems.modules import parse_module_reply, slot_schema
from todeval.benchmarks.booking.llm_systems.prompts import default_prompts, transcript_text
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
from todeval.benchmarks.booking.tasks import BOOKING_DOMAINS
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core.records import CallUsage
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

NAME = "hd-pipeline"
FEW_SHOT = 2
"""Default number of retrieved examples per prompt."""
ROLES = ("system.domain", "system.state", "system.response")
NO_DOMAIN = "none"


def domain_schema(entities: tuple[str, ...]) -> dict[str, Any]:
    """The domain detector's reply schema in a world of ``entities``."""
    return {
        "type": "object",
        "properties": {"domain": {"type": "string", "enum": [*entities, NO_DOMAIN]}},
        "required": ["domain"],
        "additionalProperties": False,
    }


DOMAIN_SCHEMA = domain_schema(BOOKING_DOMAINS)
"""MultiWOZ's (restaurant, hotel, train)."""
_SHOWN_ROWS = 3


class _RoleFailure(Exception):
    def __init__(self, role: str, error: str, raw: str) -> None:
        super().__init__(error)
        self.text = f"[{role}: {error}] {raw}"


@dataclass
class _Domain:
    state: dict[str, str] = field(default_factory=dict)
    searched: dict[str, str] | None = None
    """The searchable part of the state at the last DB search (None: never searched)."""
    result: DbResult | None = None
    row: dict[str, str] | None = None
    booking: BookingResult | None = None
    attempted: dict[str, str] | None = None
    """The state of the last booking attempt (a failed one is not retried unchanged)."""


def few_shot_of(options: PlayerOptions) -> int:
    """``options.extra["few_shot"]`` as a count (default :data:`FEW_SHOT`)."""
    value = options.extra.get("few_shot")
    count = FEW_SHOT if value is None else int(value)
    if count < 0:
        raise ValueError(f"few_shot must be 0 or more, not {count}")
    return count


def _describe(prop: dict[str, Any]) -> str:
    text = str(prop.get("description", ""))
    if "enum" in prop:
        text += f" (one of: {', '.join(str(v) for v in prop['enum'])})"
    if "pattern" in prop:
        text += " (HH:MM)"
    return text


def _examples_block(title: str, lines: list[str]) -> str:
    return f"\n{title}\n" + "\n".join(lines) if lines else ""


class HDPipelineSystem:
    """Domain detection, state tracking, DB search, booking and response generation."""

    def __init__(
        self,
        *,
        model: Backend,
        generation: Sampling | None = None,
        prompts: PromptSet | None = None,
        few_shot: int = FEW_SHOT,
        retriever: ExampleRetriever | None = None,
    ) -> None:
        self.model = model
        self.generation = generation or Sampling()
        self.prompts = prompts or default_prompts()
        self.few_shot = few_shot
        self.retriever = retriever
        self.seed = 0
        self._reset("test")

    @classmethod
    def from_options(cls, options: PlayerOptions) -> HDPipelineSystem:
        return cls(
            model=module_model(options, NAME),
            generation=sampling_of(options),
            prompts=options.prompts,
            few_shot=few_shot_of(options),
        )

    def _reset(self, task_set: str) -> None:
        self.world = world_of(task_set)
        self.shots = 0
        self.domains = {d: _Domain() for d in self.world.entities}
        self.domain: str | None = None
        self.lines: list[str] = []
        self.examples: list[Example] = []
        self.task_set = task_set

    async def start(self, context: SystemContext) -> None:
        self._reset(context.task_set)
        self.seed = context.seed
        self.domain_schema = domain_schema(self.world.entities)
        self.domain_validator = jsonschema.Draft202012Validator(self.domain_schema)
        self.schemas = {d: slot_schema(self.world, d) for d in self.world.entities}
        self.validators = {d: jsonschema.Draft202012Validator(s) for d, s in self.schemas.items()}
        # the examples are MultiWOZ's validation turns: none for a domain pack's world
        self.shots = self.few_shot if not self.world.from_pack else 0
        if self.shots and self.retriever is None:
            self.retriever = default_retriever()

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
                output = await self._respond(
                    usage, note=f"The last step failed: {observation.reason}"
                )
        except _RoleFailure as failure:
            return SystemOutput(text=failure.text, usage=usage)
        return output.model_copy(update={"usage": usage})

    # -- model calls ---------------------------------------------------------------------------

    async def _call(
        self,
        role: str,
        instructions: str,
        content: str,
        usage: list[CallUsage],
        schema: dict[str, Any] | None = None,
    ) -> str:
        request = self.generation.request(
            [
                ChatMessage(role="system", content=instructions),
                ChatMessage(role="user", content=content),
            ],
            seed=self.seed,
            schema=schema,
        )
        result = await generate_accounted(self.model, request, role=role, usage=usage)
        return result.text

    def _retrieved(self, domain: str | None) -> list[Example]:
        if domain is None:
            return self.examples
        same = [e for e in self.examples if e.domain == domain]
        if len(same) >= self.shots or self.retriever is None or not self.lines:
            return same[: self.shots]
        latest = self.lines[-1].removeprefix("user: ")
        return self.retriever.retrieve(latest, self.shots, domain)

    async def _detect_domain(self, usage: list[CallUsage]) -> str:
        lines = [f"user: {e.user}\n{compact_json({'domain': e.domain})}" for e in self.examples]
        instructions = self.prompts.render(
            "hd_domain", examples=_examples_block("Examples:", lines)
        )
        content = f"{transcript_text(self.lines)}\n\nDomain of the latest user message:"
        raw = await self._call("system.domain", instructions, content, usage, self.domain_schema)
        value, error = parse_module_reply(raw, self.domain_validator)
        if value is None:
            raise _RoleFailure("system.domain", error or "unusable", raw)
        return str(value["domain"])

    async def _track_state(self, domain: str, usage: list[CallUsage]) -> dict[str, str]:
        schema = self.schemas[domain]
        keys = "\n".join(f"- {k}: {_describe(p)}" for k, p in schema["properties"].items())
        lines = [
            f"user: {e.user}\n{compact_json(self._known(domain, e.state))}"
            for e in self._retrieved(domain)
        ]
        instructions = self.prompts.render(
            "hd_state",
            domain=domain,
            keys=keys,
            examples=_examples_block("Examples (a user message and the state after it):", lines),
        )
        current = compact_json(self.domains[domain].state)
        content = (
            f"{transcript_text(self.lines)}\n\nCurrent {domain} state: {current}\n\n"
            f"Updated {domain} state:"
        )
        raw = await self._call("system.state", instructions, content, usage, schema)
        value, error = parse_module_reply(raw, self.validators[domain], drop_nulls=True)
        if value is None:
            raise _RoleFailure("system.state", error or "unusable", raw)
        return {k: str(v).strip() for k, v in value.items() if str(v).strip()}

    def _known(self, domain: str, state: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in state.items() if k in self.schemas[domain]["properties"]}

    async def _respond(self, usage: list[CallUsage], note: str = "") -> SystemOutput:
        lines = [f"user: {e.user}\nassistant: {e.reply}" for e in self._retrieved(self.domain)]
        instructions = self.prompts.render(
            "hd_response", examples=_examples_block("Examples of replies:", lines)
        )
        raw = await self._call("system.response", instructions, self._situation(note), usage)
        message = raw.strip()
        if not message:
            raise _RoleFailure("system.response", "empty reply", raw)
        self.lines.append(f"assistant: {message}")
        return SystemOutput(tool_call=ToolCall(name=FOLLOWUP, arguments={"message": message}))

    def _situation(self, note: str) -> str:
        parts = [transcript_text(self.lines), ""]
        if self.domain is None:
            parts.append("Domain: not known yet (ask what the user needs).")
        else:
            d = self.domains[self.domain]
            parts.append(f"Domain: {self.domain}")
            parts.append(f"State: {compact_json(d.state)}")
            if d.result is None:
                parts.append("Database: not searched yet.")
            else:
                rows = compact_json(d.result.rows[:_SHOWN_ROWS])
                parts.append(f"Database: {d.result.total} match(es); first rows: {rows}")
            missing = self._missing(self.domain)
            if missing:
                parts.append(f"Booking details missing: {', '.join(missing)}")
            if d.booking is not None:
                if d.booking.ok:
                    parts.append(f"Booking: booked, reference number {d.booking.reference}")
                else:
                    parts.append(f"Booking: failed ({d.booking.message})")
        if note:
            parts.append(f"Note: {note}")
        parts.append("\nYour reply to the user:")
        return "\n".join(parts)

    # -- observations --------------------------------------------------------------------------

    async def _on_user(self, text: str, usage: list[CallUsage]) -> SystemOutput:
        self.lines.append(f"user: {text}")
        self.examples = (
            self.retriever.retrieve(text, self.shots)
            if self.retriever is not None and self.shots
            else []
        )
        detected = await self._detect_domain(usage)
        if detected in self.world.entities:
            self.domain = detected
        if self.domain is None:
            return await self._respond(usage)
        domain = self.domain
        d = self.domains[domain]
        d.state.update(await self._track_state(domain, usage))
        searchable = self._searchable(domain)
        if searchable and searchable != d.searched:
            return self._search(domain, searchable)
        if self._bookable(domain):
            return self._book(domain)
        return await self._respond(usage)

    async def _on_db(self, result: DbResult, usage: list[CallUsage]) -> SystemOutput:
        d = self.domains[result.domain]
        d.result = result
        name = d.state.get("name", "").lower()
        named = [r for r in result.rows if name and r.get("name", "").lower() == name]
        rows = named or result.rows
        d.row = rows[0] if rows else None
        if self._bookable(result.domain):
            return self._book(result.domain)
        return await self._respond(usage)

    async def _on_booking(self, result: BookingResult, usage: list[CallUsage]) -> SystemOutput:
        self.domains[result.domain].booking = result
        return await self._respond(usage)

    # -- state and actions ---------------------------------------------------------------------

    def _searchable(self, domain: str) -> dict[str, str]:
        properties = self.world.tool_parameters()[self.world.search_tool(domain)]["properties"]
        return {k: v for k, v in self.domains[domain].state.items() if k in properties}

    def _missing(self, domain: str) -> list[str]:
        state = self.domains[domain].state
        return [k for k in self.world.booking_details(domain) if k not in state]

    def _bookable(self, domain: str) -> bool:
        d = self.domains[domain]
        booked = d.booking is not None and d.booking.ok
        retry = d.attempted == d.state
        return d.row is not None and not booked and not retry and not self._missing(domain)

    def _search(self, domain: str, searchable: dict[str, str]) -> SystemOutput:
        self.domains[domain].searched = dict(searchable)
        arguments = search_arguments(self.world, domain, searchable)
        tool = self.world.search_tool(domain)
        return SystemOutput(tool_call=ToolCall(name=tool, arguments=arguments))

    def _book(self, domain: str) -> SystemOutput:
        d = self.domains[domain]
        d.attempted = dict(d.state)
        arguments = booking_arguments(self.world, domain, d.row or {}, d.state)
        tool = self.world.booking_tool(domain)
        return SystemOutput(tool_call=ToolCall(name=tool, arguments=arguments))


class HDPipelineZeroShotSystem(HDPipelineSystem):
    """``hd-pipeline-zeroshot``: the pipeline without few-shot examples (``few_shot = 0``), the
    command line's way to switch retrieval off (``--system hd-pipeline-zeroshot``)."""

    @classmethod
    def from_options(cls, options: PlayerOptions) -> HDPipelineSystem:
        return cls(
            model=module_model(options, NAME),
            generation=sampling_of(options),
            prompts=options.prompts,
            few_shot=0,
        )
