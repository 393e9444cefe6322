"""``agent``: an external agent, built with any framework, behind its own chat endpoint.

Each user message is one request to the agent's chat endpoint (``--system-url URL``,
``--channel openai-chat|rasa-rest|plain``, see :mod:`todeval.agents.channels`). While the agent
works on its reply it may call the booking tools -- the six DB and booking tools, with the
schemas built-in systems get -- on the run's MCP tool server, whose URL and this episode's token
come with every request. Each call reaches the game master as one output of this system, so it
is parsed and validated by the run's ``--protocol``, recorded as an event and answered with the
same result a built-in system reads (a validation failure under ``--on-violation reprompt`` is
answered as a tool error; under ``abort`` the episode ends and the call gets an error). The
agent's reply is the turn's follow-up: the ``followup`` tool is not served; a reply rejected
under ``reprompt`` (an empty one, under ``strict``) is answered with the notice as the agent's
next message.

Accounting: one call per reply under the role ``system`` with the request's wall time (tool
calls included) and the endpoint's token usage when it reports it, else ``tokens_unknown``.
An endpoint that is down, times out, answers an error status or a body that is not the
channel's shape is the system's error (``system_error``), never an infrastructure error.
"""

from __future__ import annotations

from typing import Self

from todeval.agents.channels import AgentEndpoint, AgentReply
from todeval.agents.conversation import AgentConversation, ToolRequest
from todeval.agents.hub import AgentHub, agent_endpoint, new_conversation_id
from todeval.agents.tool_server import ToolAnswer, ToolSpec, tool_specs
from todeval.benchmarks.booking.llm_systems.base import result_content
from todeval.benchmarks.booking.messages import (
    BookingResult,
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserMessage,
    ViolationNotice,
)
from todeval.benchmarks.booking.schema import FOLLOWUP
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.dialogue.participants import PlayerOptions

SERVED_NAME = "todeval-booking"


def booking_tools(task_set: str) -> list[ToolSpec]:
    """The tools served over MCP: a task set's (or a domain pack's) tool definitions without
    ``followup``."""
    return tool_specs(world_of(task_set).tools_list(), leave_out=(FOLLOWUP,))


def called_over_mcp(name: str) -> str:
    """The tool name a call over MCP is judged by: ``followup`` is not served (the agent's reply
    is the follow-up), so a call of it is a call of an unknown tool."""
    return f"{name} (over MCP)" if name.strip().lower() == FOLLOWUP else name


def booking_hub(task_set: str) -> AgentHub:
    return AgentHub(booking_tools(task_set), name=SERVED_NAME)


class AgentSystem:
    """A booking system whose turns are an external agent's replies."""

    def __init__(self, endpoint: AgentEndpoint, hub: AgentHub) -> None:
        self.endpoint = endpoint
        self.hub = hub
        self.conversation: AgentConversation | None = None
        self.pending: ToolRequest | None = None

    @classmethod
    def from_options(cls, options: PlayerOptions) -> Self:
        return cls(*agent_endpoint(options))

    async def start(self, context: SystemContext) -> None:
        self.conversation = AgentConversation(
            self.endpoint, new_conversation_id(context.seed), tools=self.hub.tool_server
        )
        await self.conversation.open()

    async def respond(self, observation: Observation) -> SystemOutput:
        conversation = self.conversation
        if conversation is None:
            raise RuntimeError("start() the system first")
        if isinstance(observation, UserMessage):
            conversation.say(observation.text)
        elif self.pending is not None:
            self.pending.answer(_answer(observation))
            self.pending = None
        elif isinstance(observation, ViolationNotice):
            # The rejected output was the agent's reply: no call waits for the notice and no
            # request is in flight, so it goes to the agent as its next message (else the
            # episode would wait for an event that never comes).
            conversation.say(f"call rejected: {observation.reason}")
        event = await conversation.next()  # AgentEndpointError: the system's error
        if isinstance(event, AgentReply):
            if self.pending is not None:
                self.pending.refuse("the turn has ended: the agent already replied")
                self.pending = None
            message = ToolCall(name=FOLLOWUP, arguments={"message": event.text})
            return SystemOutput(tool_call=message, text=event.text, usage=[event.usage])
        self.pending = event
        call = ToolCall(name=called_over_mcp(event.name), arguments=event.arguments)
        return SystemOutput(tool_call=call)

    async def finish(self) -> None:
        if self.pending is not None:
            self.pending.refuse("the episode has ended")
            self.pending = None
        if self.conversation is not None:
            await self.conversation.close()


def _answer(observation: Observation) -> ToolAnswer:
    if isinstance(observation, DbResult | BookingResult):
        return ToolAnswer(text=result_content(observation))
    if isinstance(observation, ViolationNotice):
        return ToolAnswer(text=f"call rejected: {observation.reason}", is_error=True)
    return ToolAnswer(text="unexpected observation", is_error=True)
