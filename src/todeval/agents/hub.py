"""How a run puts an external agent in one of its roles, and what the run's episodes share.

* :class:`AgentHub` -- the keep-alive HTTP clients of the chat endpoints and, when the benchmark
  serves tools, one MCP tool server (started when the first episode opens, stopped when the
  run ends);
* :func:`check_agent_choice` -- the usage errors of ``--<role> agent`` and its options;
* :meth:`AgentHub.player_extra` / :func:`agent_endpoint` -- the run hands the hub and the
  endpoint's settings to the player through ``PlayerOptions.extra``, and the player builds its
  :class:`~.channels.AgentEndpoint` from them;
* :func:`new_conversation_id` -- the id that names one remote conversation.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from todeval.agents.channels import (
    DEFAULT_TIMEOUT_S,
    AgentEndpoint,
    check_channel,
    check_url,
)
from todeval.agents.http import HttpClients
from todeval.agents.tool_server import ToolServer, ToolSpec
from todeval.dialogue.participants import PlayerOptions
from todeval.errors import UsageError

AGENT = "agent"
"""The player name that puts an external agent in a role (``--system agent``, ...)."""
DEFAULT_CHANNEL = "openai-chat"
Closer = Callable[[], Coroutine[Any, Any, None]]


class AgentHub:
    def __init__(self, tools: list[ToolSpec] | None = None, *, name: str = "todeval") -> None:
        self.clients = HttpClients()
        self.tool_server = ToolServer(tools, name=name) if tools is not None else None

    def player_extra(self, url: str | None, channel: str | None) -> dict[str, Any]:
        """The ``PlayerOptions.extra`` entries :func:`agent_endpoint` reads."""
        return {"agent_hub": self, "url": url, "channel": channel or DEFAULT_CHANNEL}

    def closing(self, then: Closer) -> Closer:
        """A run's ``aclose``: this hub's, then ``then`` (the model pool's), however it ends."""

        async def aclose() -> None:
            try:
                await self.aclose()
            finally:
                await then()

        return aclose

    async def aclose(self) -> None:
        try:
            if self.tool_server is not None:
                await asyncio.to_thread(self.tool_server.stop)
        finally:
            await self.clients.aclose()


def check_agent_choice(
    role: str,
    player: str,
    url: str | None,
    channel: str | None,
    *,
    url_also_for: tuple[str, ...] = (),
) -> None:
    """Usage errors: ``--<role>-url`` or ``--channel`` without ``--<role> agent`` (the URL may
    also serve the players in ``url_also_for``), an agent without an http(s) URL, an unknown
    channel."""
    flag = f"--{role}-url"
    if player != AGENT:
        if url is not None and player not in url_also_for:
            raise UsageError(f"{flag} is for --{role} agent")
        if channel is not None:
            raise UsageError(f"--channel is for --{role} agent")
        return
    check_url(url, flag)
    check_channel(channel or DEFAULT_CHANNEL)


def agent_endpoint(options: PlayerOptions, *, model: str = AGENT) -> tuple[AgentEndpoint, AgentHub]:
    """The chat endpoint a run configured for the player of ``options.role``, and the hub."""
    hub = options.extra.get("agent_hub")
    if not isinstance(hub, AgentHub):
        raise UsageError(f"an agent {options.role} is built by a run (todeval run ...)")
    endpoint = AgentEndpoint(
        str(options.extra.get("url") or ""),
        str(options.extra.get("channel") or DEFAULT_CHANNEL),
        role=options.role,
        model=model,
        timeout_s=float(options.extra.get("timeout_s", DEFAULT_TIMEOUT_S)),
        clients=hub.clients,
    )
    return endpoint, hub


def new_conversation_id(seed: int) -> str:
    """A remote conversation's name: the episode's seed and a random part. It never changes
    what is played."""
    return f"{seed:016x}-{uuid.uuid4().hex[:12]}"
