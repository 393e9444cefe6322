"""The stdio bridge: ``todeval serve tools booking --transport stdio --connect URL`` forwards an
agent's stdio MCP calls to a run's tool server with the episode token of the environment."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import (
    TASK_ID,
    agent_stack,
    booking_rules,
    events,
    kinds,
    make_script,
    require,
    run_agent_booking,
)
from todeval.agents.tool_server import REFUSED
from todeval.testing.server_process import stop_process

SERVE = [sys.executable, "-m", "todeval", "serve", "tools", "booking"]
SEARCH = ("retrievefromhoteldb", {"area": "north", "stars": "4"})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, str]]:
    """A tool server over HTTP (the sandbox stands in for a run's): its URL and token."""
    require("mcp")
    process = subprocess.Popen(
        [*SERVE, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[1]
        token = process.stdout.readline().split()[1]
        yield url, token
    finally:
        stop_process(process)


def _through(url: str, token: str | None, *calls: tuple[str, dict[str, Any]]) -> Any:
    """List the tools and make ``calls`` through a bridge subprocess (official stdio client)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {k: v for k, v in os.environ.items() if k != "TODEVAL_EPISODE_TOKEN"}
    if token is not None:
        env["TODEVAL_EPISODE_TOKEN"] = token
    params = StdioServerParameters(
        command=SERVE[0], args=[*SERVE[1:], "--transport", "stdio", "--connect", url], env=env
    )

    async def session() -> tuple[Any, list[Any]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed = await client.list_tools()
            results = []
            for name, arguments in calls:
                try:
                    results.append(await client.call_tool(name, arguments))
                except Exception as exc:  # the refusal, as the stdio client raises it
                    results.append(exc)
            return listed, results

    return asyncio.run(session())


def _direct(url: str, token: str, name: str, arguments: dict[str, Any]) -> Any:
    from todeval.agents.client import mcp_session

    async def call() -> Any:
        async with mcp_session(url, token) as client:
            return await client.list_tools(), await client.call_tool(name, arguments)

    return asyncio.run(call())


def test_the_bridge_lists_and_answers_as_the_server_does(upstream: tuple[str, str]) -> None:
    url, token = upstream
    listed, (result,) = _through(url, token, SEARCH)
    direct_listed, direct = _direct(url, token, *SEARCH)
    dump = [t.model_dump(exclude={"meta"}) for t in listed.tools]
    assert dump == [t.model_dump(exclude={"meta"}) for t in direct_listed.tools]
    assert len(dump) == 6
    assert result.is_error is False
    assert result.content[0].text == direct.content[0].text
    assert '"total":' in result.content[0].text


def test_a_wrong_token_is_refused_through_the_bridge(upstream: tuple[str, str]) -> None:
    url, _ = upstream
    _, (refused,) = _through(url, "not-a-token", SEARCH)
    from mcp.shared.exceptions import MCPError

    assert isinstance(refused, MCPError), refused
    assert refused.code == REFUSED  # the run's refusal, code and all
    assert refused.message.startswith("refused: no open episode has this token")


@pytest.mark.parametrize(
    ("argv", "env_token", "says"),
    [
        (["--transport", "stdio", "--connect", "URL"], None, "TODEVAL_EPISODE_TOKEN"),
        (["--connect", "URL"], "t", "--transport stdio"),
        (["--transport", "stdio", "--connect", "URL", "--tasks", "dev"], "t", "no sandbox"),
        (["--transport", "stdio", "--connect", "http://example.org/mcp"], "t", "loopback"),
    ],
)
def test_bad_bridge_usage_is_one_line_exit_2(
    upstream: tuple[str, str], argv: list[str], env_token: str | None, says: str
) -> None:
    url, _ = upstream
    env = {k: v for k, v in os.environ.items() if k != "TODEVAL_EPISODE_TOKEN"}
    if env_token is not None:
        env["TODEVAL_EPISODE_TOKEN"] = env_token
    done = subprocess.run(
        [*SERVE, *[url if a == "URL" else a for a in argv]],
        capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_example_agent_books_through_a_stdio_tool_subprocess(tmp_path: Path) -> None:
    """The example agent with --mcp-transport stdio starts the bridge as its MCP server; the
    run's game master sees and validates both calls, and the booking is made."""
    script = make_script(booking_rules(), "Sorry, could you say that again?")
    with agent_stack(script, "--mcp-transport", "stdio") as stack:
        run = run_agent_booking(tmp_path / "run", stack.url("openai-chat"))
    record = run.record
    assert record["outcome"] == "success", record["reason"]
    assert record["metrics"]["booking.booking_accuracy"] == 1.0
    assert [k for k in kinds(record) if k in ("db_query", "booking_request")] == [
        "db_query",
        "booking_request",
    ]
    assert events(record, "booking_result")[0]["data"]["ok"] is True
    assert record["task_id"].endswith(TASK_ID)
