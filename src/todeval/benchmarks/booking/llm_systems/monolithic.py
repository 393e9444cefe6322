"""``monolithic``: one LLM holds the whole dialogue and acts through the seven tools.

Each observation is appended to its chat history (user messages as user turns; DB and booking
results as tool messages answering its previous call, rows as compact JSON); each
:meth:`respond` is one model call, whose first tool call (raw arguments) is the action; when
the game master queues calls (``clemtodd``), the reply's further calls are passed on too and
every call stays in the history, answered in order. A reply without a tool call is returned as
text, which the game master records as a format violation.
Its instructions are the ``monolithic`` prompt template.
"""

from __future__ import annotations

from todeval.benchmarks.booking.llm_systems.base import ToolCallingSystem, output_for
from todeval.benchmarks.booking.messages import Observation, SystemContext, SystemOutput
from todeval.core.records import CallUsage


class MonolithicSystem(ToolCallingSystem):
    """One LLM with the seven tools."""

    template = "monolithic"
    player = "monolithic"
    passes_all_calls = True

    async def start(self, context: SystemContext) -> None:
        self.restart(context)
        self.tools = context.tools

    async def respond(self, observation: Observation) -> SystemOutput:
        self.chat.observe(observation)
        usage: list[CallUsage] = []
        result, call = await self.call(usage)
        return output_for(call, result.text, usage, self.further_calls(result))
