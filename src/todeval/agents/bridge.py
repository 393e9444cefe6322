"""A stdio MCP server that forwards to a run's tool server: for agents that start their tools
as a subprocess speaking MCP on stdin/stdout.

``todeval serve tools NAME --transport stdio --connect URL`` (the URL and the episode token an
agent is handed with every request, the token in ``TODEVAL_EPISODE_TOKEN``) lists the tools
the run serves and passes every call on, over one streamable-HTTP session carrying the token,
to the run's game master. The answers come back unchanged, errors included: a call the run
refuses (a closed episode, a wrong token) is refused here with the same JSON-RPC error.
"""

from __future__ import annotations

from typing import Any

from todeval.agents.client import mcp_session
from todeval.agents.conversation import CALL_TIMEOUT_S
from todeval.agents.tool_server import ToolAnswer, ToolServer, ToolSpec

TOKEN_ENV = "TODEVAL_EPISODE_TOKEN"


async def serve_stdio_bridge(url: str, token: str) -> None:
    """Serve this process's stdin/stdout until the client closes it, forwarding to ``url``."""
    import mcp_types as types

    async with mcp_session(url, token, timeout_s=CALL_TIMEOUT_S) as upstream:
        started = await upstream.initialize()  # the session's (already made) handshake
        listed = await upstream.list_tools()
        tools = [
            ToolSpec(name=t.name, description=t.description or "", input_schema=t.input_schema)
            for t in listed.tools
        ]

        async def forward(name: str, arguments: dict[str, Any] | str) -> ToolAnswer:
            result = await upstream.call_tool(name, arguments)  # type: ignore[arg-type]
            text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
            return ToolAnswer(text=text, is_error=bool(result.is_error))

        name = started.server_info.name if started.server_info else "todeval"
        await ToolServer(tools, name=name, stdio_line=forward).run_stdio()
