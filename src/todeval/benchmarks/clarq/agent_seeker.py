"""``agent``: an external agent as the seeker, behind its own chat endpoint.

``--seeker agent --seeker-url URL [--channel openai-chat|rasa-rest|plain]`` (see
:mod:`todeval.agents.channels`). The agent is told what a built-in LLM seeker in chat mode is
told: its first message is the ``seeker_chat_<lang>`` template (the task's background and how
to talk to Jax) followed by Jax's greeting; every later message is Jax's reply as the seeker
would read it (``Jax: ...``). The agent's reply is the seeker's utterance, read exactly as an
LLM seeker's (:func:`~todeval.benchmarks.clarq.seekers.clean_reply`): a goodbye ends the
dialogue by the run's protocol.

Accounting: one call per reply under the role ``seeker``, with the request's wall time and the
endpoint's token usage when it reports it, else ``tokens_unknown``. An endpoint that is down,
times out, answers an error status or a body that is not the channel's shape raises
:class:`~todeval.agents.channels.AgentEndpointError`: the episode is the seeker's error
(``system_error``, ``clarq.end = seeker_error``), never an infrastructure error.
"""

from __future__ import annotations

from typing import Self

from todeval.agents.channels import AgentEndpoint, ChatTurn, Handoff
from todeval.agents.hub import agent_endpoint, new_conversation_id
from todeval.benchmarks.clarq.protocol import SeekerView
from todeval.benchmarks.clarq.seekers import background_text, clean_reply
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

ROLE = "seeker"


def agent_brief(context: SeekerView, prompts: PromptSet) -> str:
    """What the agent is told before Jax's greeting: the chat-mode seeker's system message."""
    background = background_text(context, prompts)
    return prompts.render(f"seeker_chat_{context.lang}", background=background).rstrip()


class AgentSeeker:
    """A seeker whose utterances are an external agent's replies."""

    def __init__(self, endpoint: AgentEndpoint, prompts: PromptSet) -> None:
        self.endpoint = endpoint
        self.prompts = prompts
        self.history: list[ChatTurn] = []

    @classmethod
    def from_options(cls, options: PlayerOptions) -> Self:
        endpoint, _ = agent_endpoint(options)
        return cls(endpoint, options.require_prompts())

    async def start(self, context: SeekerView) -> None:
        self.context = context
        self.history = []
        # The conversation id names the remote session only; it never changes what is played.
        self.handoff = Handoff(conversation_id=new_conversation_id(context.seed))
        self.brief = agent_brief(context, self.prompts)

    async def respond(self, provider_message: str) -> str:
        # the first message: the brief, then the greeting (one message, so the reply to it is
        # the seeker's first utterance); then Jax's replies as they come
        message = f"{self.brief}\n\n{provider_message}" if not self.history else provider_message
        self.history.append(ChatTurn(role="user", content=message))
        reply = await self.endpoint.send(list(self.history), self.handoff)  # errors: the seeker's
        self.context.usage.append(reply.usage)
        text = clean_reply(reply.text)
        self.history.append(ChatTurn(role="assistant", content=text))
        return text


__all__ = ["AgentSeeker", "agent_brief"]
