"""What one run shares between the episodes of its agent players: the keep-alive HTTP clients
of the chat endpoints and, when the benchmark serves tools, one MCP tool server (started when
the first episode opens, stopped when the run ends)."""

from __future__ import annotations

import asyncio

from todeval.agents.http import HttpClients
from todeval.agents.tool_server import ToolServer, ToolSpec


class AgentHub:
    def __init__(self, tools: list[ToolSpec] | None = None, *, name: str = "todeval") -> None:
        self.clients = HttpClients()
        self.tool_server = ToolServer(tools, name=name) if tools is not None else None

    async def aclose(self) -> None:
        try:
            if self.tool_server is not None:
                await asyncio.to_thread(self.tool_server.stop)
        finally:
            await self.clients.aclose()
