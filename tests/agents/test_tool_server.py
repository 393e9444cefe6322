"""The booking tools' MCP server, seen by a client of the official ``mcp`` SDK over real
streamable HTTP on 127.0.0.1: the listed tools, and which calls are refused for their token."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from todeval.agents.client import mcp_session as session
from todeval.agents.tool_server import REFUSED, TOKEN_META_KEY, ToolAnswer, ToolServer
from todeval.benchmarks.booking.schema import FOLLOWUP, tool_definitions

from .conftest import require


@pytest.fixture(scope="module")
def server() -> Iterator[ToolServer]:
    require("mcp")
    from todeval.benchmarks.booking.llm_systems.agent_system import SERVED_NAME, booking_tools

    tools = ToolServer(booking_tools("test"), name=SERVED_NAME)
    tools.start_http()
    try:
        yield tools
    finally:
        tools.stop()


class Line:
    """An episode's handler: records the calls it answers."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def __call__(self, name: str, arguments: dict[str, Any] | str) -> ToolAnswer:
        self.calls.append((name, arguments))
        return ToolAnswer(text=f"answered {name}")


def text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_lists_the_booking_tools_without_followup(server: ToolServer) -> None:
    async def listed() -> list[Any]:
        async with session(server.url) as client:  # listing needs no token
            return list((await client.list_tools()).tools)

    tools = asyncio.run(listed())
    expected = [
        (f["name"], f["description"], f["parameters"])
        for f in (d["function"] for d in tool_definitions("test"))
        if f["name"] != FOLLOWUP
    ]
    assert len(expected) == 6
    assert [(t.name, t.description, t.input_schema) for t in tools] == expected


def test_calls_with_a_missing_wrong_or_closed_token_are_refused(server: ToolServer) -> None:
    from mcp import MCPError

    line = Line()
    token = server.open_line(line)
    closed = server.open_line(line)
    server.close_line(closed)
    arguments = {"name": "city centre north b and b"}

    async def refused(token: str | None, meta: dict[str, Any] | None = None) -> MCPError:
        async with session(server.url, token) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("retrievefromhoteldb", arguments, meta=meta)
            return caught.value

    async def play() -> list[MCPError]:
        return [
            await refused(None),
            await refused("not-a-token"),
            await refused(closed),
            await refused(None, {TOKEN_META_KEY: closed}),
            await refused(None, {TOKEN_META_KEY: "not-a-token"}),
        ]

    before = server.refused
    errors = asyncio.run(play())
    assert [e.code for e in errors] == [REFUSED] * 5
    assert "no episode token" in errors[0].message
    assert all("no open episode has this token" in e.message for e in errors[1:])
    assert server.refused - before == 5
    assert line.calls == []  # no refused call reached an episode
    server.close_line(token)


def test_a_token_in_the_header_or_in_meta_reaches_its_episode(server: ToolServer) -> None:
    first, second = Line(), Line()
    token_1 = server.open_line(first)
    token_2 = server.open_line(second)

    async def play() -> list[Any]:
        async with session(server.url, token_1) as client:
            by_header = await client.call_tool("retrievefromhoteldb", {"area": "north"})
        async with session(server.url) as client:
            by_meta = await client.call_tool(
                "validatehotelbooking", {"day": "friday"}, meta={TOKEN_META_KEY: token_2}
            )
        async with session(server.url, "not-a-token") as client:  # _meta wins over the header
            meta_first = await client.call_tool(
                "retrievefromtraindb", {}, meta={TOKEN_META_KEY: token_1}
            )
        return [by_header, by_meta, meta_first]

    results = asyncio.run(play())
    assert [r.is_error for r in results] == [False, False, False]
    assert [text(r) for r in results] == [
        "answered retrievefromhoteldb",
        "answered validatehotelbooking",
        "answered retrievefromtraindb",
    ]
    assert first.calls == [("retrievefromhoteldb", {"area": "north"}), ("retrievefromtraindb", {})]
    assert second.calls == [("validatehotelbooking", {"day": "friday"})]
    server.close_line(token_1)
    server.close_line(token_2)


def test_a_call_with_no_open_turn_gets_an_error_result(server: ToolServer) -> None:
    """An episode's conversation is open but no message is being answered: the call is
    answered with an error result (not refused: the token is valid), and after the episode
    closes its token is refused."""
    from mcp import MCPError

    from todeval.agents.channels import AgentEndpoint
    from todeval.agents.conversation import AgentConversation

    async def play() -> tuple[Any, MCPError]:
        # the endpoint is never contacted: nothing is said to the agent
        endpoint = AgentEndpoint("http://127.0.0.1:9/never", "openai-chat")
        conversation = AgentConversation(endpoint, "conversation-1", tools=server)
        await conversation.open()
        token = conversation.token
        assert token is not None and conversation.handoff.mcp_url == server.url
        async with session(server.url, token) as client:
            idle = await client.call_tool("retrievefromhoteldb", {"area": "north"})
        await conversation.close()
        async with session(server.url, token) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("retrievefromhoteldb", {"area": "north"})
        return idle, caught.value

    idle, after_close = asyncio.run(play())
    assert idle.is_error is True
    assert "no turn in progress" in text(idle)
    assert after_close.code == REFUSED


def test_a_foreign_host_header_is_refused(server: ToolServer) -> None:
    """DNS rebinding: a page on another origin that resolves to 127.0.0.1 cannot use the tools."""
    import httpx2

    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=30) as http:
        local = http.post(server.url, json=initialize, headers=headers)
        foreign = http.post(
            server.url, json=initialize, headers={**headers, "Host": "tools.example:80"}
        )
        origin = http.post(
            server.url, json=initialize, headers={**headers, "Origin": "http://tools.example"}
        )
    assert local.status_code == 200
    assert foreign.status_code == 421
    assert origin.status_code == 403


def test_the_tool_server_binds_loopback_only() -> None:
    from todeval.errors import UsageError

    with pytest.raises(UsageError, match="loopback"):
        ToolServer([], host="0.0.0.0")
