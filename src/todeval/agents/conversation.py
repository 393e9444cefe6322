"""One episode's conversation with an external agent.

:meth:`AgentConversation.say` sends a message to the agent's chat endpoint (in the background)
and :meth:`AgentConversation.next` returns what happens next: a :class:`ToolRequest` -- a tool
call the agent made over MCP while working on its reply, waiting for the episode to answer it --
or the :class:`~.channels.AgentReply` that ends the turn. The episode's game master answers each
request (:meth:`ToolRequest.answer`) before asking for the next event, so tool calls are played
one at a time, in the order they arrived, on the episode's own event loop.

A tool call that arrives while no turn is open (before the first message, after the reply) is
answered with an error at once. :meth:`AgentConversation.close` ends the episode: its token is
refused from then on, waiting calls get an error, the chat request is cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from dataclasses import dataclass, field
from typing import Any

from todeval.agents.channels import AgentEndpoint, AgentReply, ChatTurn, Handoff
from todeval.agents.tool_server import ToolAnswer, ToolServer

CALL_TIMEOUT_S = 600.0
"""How long a tool call waits for its episode (a guard; the game master answers at once)."""


@dataclass
class ToolRequest:
    """One tool call of the agent, waiting for the episode's answer."""

    name: str
    arguments: dict[str, Any] | str
    future: concurrent.futures.Future[ToolAnswer] = field(
        default_factory=concurrent.futures.Future, repr=False
    )

    def answer(self, answer: ToolAnswer) -> None:
        if not self.future.done():
            self.future.set_result(answer)

    def refuse(self, reason: str) -> None:
        self.answer(ToolAnswer(text=reason, is_error=True))


@dataclass(frozen=True)
class _Failed:
    error: Exception


class AgentConversation:
    """The chat with one agent in one episode, and the tool calls it makes over MCP."""

    def __init__(
        self,
        endpoint: AgentEndpoint,
        conversation_id: str,
        *,
        tools: ToolServer | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.conversation_id = conversation_id
        self.tools = tools
        self.history: list[ChatTurn] = []
        self.token: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[ToolRequest | AgentReply | _Failed] | None = None
        self._chat: asyncio.Task[None] | None = None
        self._open_turn = False
        self._closed = False

    async def open(self) -> None:
        """Register the episode with the tool server (started on first use)."""
        self._loop = asyncio.get_running_loop()
        self._inbox = asyncio.Queue()
        if self.tools is not None:
            self.tools.start_http()
            self.token = self.tools.open_line(self._handle)

    @property
    def handoff(self) -> Handoff:
        url = self.tools.url if self.tools is not None and self.token else None
        return Handoff(conversation_id=self.conversation_id, mcp_url=url, episode_token=self.token)

    async def _handle(self, name: str, arguments: dict[str, Any] | str) -> ToolAnswer:
        """Runs on the tool server's loop: pass the call to the episode and wait."""
        loop, inbox = self._loop, self._inbox
        if self._closed or loop is None or inbox is None:
            return ToolAnswer(text="the episode has ended", is_error=True)
        if not self._open_turn:
            return ToolAnswer(
                text="no turn in progress: tools can be called only while answering a message",
                is_error=True,
            )
        request = ToolRequest(name=name, arguments=arguments)
        try:
            loop.call_soon_threadsafe(inbox.put_nowait, request)
        except RuntimeError:  # the episode's loop has closed
            return ToolAnswer(text="the episode has ended", is_error=True)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(request.future), CALL_TIMEOUT_S)
        except TimeoutError:
            return ToolAnswer(text="the episode gave no answer in time", is_error=True)

    def say(self, text: str) -> None:
        """Send ``text`` to the agent; its reply (and its tool calls) come from :meth:`next`."""
        if self._inbox is None:
            raise RuntimeError("open() the conversation first")
        self.history.append(ChatTurn(role="user", content=text))
        self._open_turn = True
        self._chat = asyncio.create_task(self._request(list(self.history)))

    async def _request(self, history: list[ChatTurn]) -> None:
        assert self._inbox is not None
        try:
            reply: AgentReply | _Failed = await self.endpoint.send(history, self.handoff)
        except Exception as exc:  # every failure ends the turn: a task that died silently
            reply = _Failed(exc)  # would leave next() waiting for ever
        self._inbox.put_nowait(reply)

    async def next(self) -> ToolRequest | AgentReply:
        """The next tool call of this turn, or the reply that ends it (AgentEndpointError when
        the endpoint failed)."""
        if self._inbox is None:
            raise RuntimeError("open() the conversation first")
        item = await self._inbox.get()
        if isinstance(item, ToolRequest):
            return item
        self._open_turn = False
        self._refuse_waiting("the turn has ended: the agent already replied")
        if isinstance(item, _Failed):
            raise item.error
        self.history.append(ChatTurn(role="assistant", content=item.text))
        return item

    def _refuse_waiting(self, reason: str) -> None:
        while self._inbox is not None and not self._inbox.empty():
            item = self._inbox.get_nowait()
            if isinstance(item, ToolRequest):
                item.refuse(reason)

    async def close(self, reason: str = "the episode has ended") -> None:
        """End the episode: refuse its token, answer waiting calls, cancel the chat request."""
        self._closed = True
        self._open_turn = False
        if self.tools is not None and self.token is not None:
            self.tools.close_line(self.token)
        self._refuse_waiting(reason)
        if self._chat is not None and not self._chat.done():
            self._chat.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._chat
