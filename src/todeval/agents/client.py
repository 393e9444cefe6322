"""An MCP client of a tool server: an initialised session of the official SDK over streamable
HTTP, carrying an episode token (``Authorization: Bearer``) when given. Used by the stdio
bridge, the tests and the benches."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp import ClientSession


@asynccontextmanager
async def mcp_session(
    url: str, token: str | None = None, *, timeout_s: float = 30.0
) -> AsyncIterator[ClientSession]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout_s, trust_env=False) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session
