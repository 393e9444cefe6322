"""``agent``: an external agent as the labeller, behind its own chat endpoint.

``--labeller agent --labeller-url URL [--channel openai-chat|rasa-rest|plain]`` (see
:mod:`todeval.agents.channels`). Each turn to label is one message to the agent: the track's
template rendered exactly as the ``llm`` labeller's prompt (the public context, the dialogue up
to the turn, the candidate ids and meanings, the ``{"labels": [...]}`` answer format). Like the
``llm`` labeller's requests, each turn is a conversation of its own (its id ends in the turn's
index), so an agent that keeps state per conversation sees one prompt per conversation. The
reply is read exactly as an ``llm`` labeller's: a JSON object (bare or in a code fence) valid
against :data:`~todeval.benchmarks.bargain.labellers.LABELS_SCHEMA`, else an unreadable turn
(a format failure, scored as a failure).

Accounting: one call per turn under the role ``labeller``, with the request's wall time and
the endpoint's token usage when it reports it, else ``tokens_unknown``. An endpoint that is
down, times out, answers an error status or a body that is not the channel's shape raises
:class:`~todeval.agents.channels.AgentEndpointError`: the dialogue is the labeller's error
(``system_error``: the turns left are scored as failures), never an infrastructure error.
"""

from __future__ import annotations

from typing import Self

from todeval.agents.channels import AgentEndpoint, ChatTurn, Handoff
from todeval.agents.hub import agent_endpoint, new_conversation_id
from todeval.benchmarks.bargain.labellers import (
    LabellerView,
    LabelOutput,
    TurnView,
    labels_checker,
    read_labels,
    render_turn,
)
from todeval.dialogue import PlayerOptions, PromptSet

ROLE = "labeller"


class AgentLabeller:
    """A labeller whose answers are an external agent's replies."""

    def __init__(self, endpoint: AgentEndpoint, prompts: PromptSet) -> None:
        self.endpoint = endpoint
        self.prompts = prompts
        self.checker = labels_checker()

    @classmethod
    def from_options(cls, options: PlayerOptions) -> Self:
        endpoint, _ = agent_endpoint(options)
        return cls(endpoint, options.require_prompts())

    async def start(self, context: LabellerView) -> None:
        self.context = context
        # The conversation ids name the remote sessions only; they never change what is played.
        self.conversation = new_conversation_id(context.seed)

    async def respond(self, observation: TurnView) -> LabelOutput:
        text = self.prompts.render(self.context.track, **render_turn(self.context, observation))
        handoff = Handoff(conversation_id=f"{self.conversation}-t{observation.index}")
        # AgentEndpointError: the labeller's error
        reply = await self.endpoint.send([ChatTurn(role="user", content=text)], handoff)
        self.context.usage.append(reply.usage)
        checked = self.checker.check(reply.text)
        if checked.value is None:
            return LabelOutput(ids=None, raw=reply.text, error=checked.error or "no labels")
        return read_labels(checked.value, reply.text, checked.error)


__all__ = ["AgentLabeller"]
