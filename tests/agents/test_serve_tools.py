"""``todeval serve tools booking`` as a real process, seen by the official ``mcp`` SDK client:
over streamable HTTP on 127.0.0.1 (the URL and episode tokens read from stdout) and over stdio;
every call answered as the game master answers it and written to the ``-o`` file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import require
from todeval.agents.client import mcp_session as session
from todeval.benchmarks.booking.llm_systems.base import result_content
from todeval.benchmarks.booking.rules import handle_output
from todeval.benchmarks.booking.schema import FOLLOWUP, tool_definitions
from todeval.benchmarks.booking.tasks import load_tasks

SERVE = [sys.executable, "-m", "todeval", "serve", "tools"]
# the served episode is the first test task, a hotel goal: clemtodd's DB holds its domains only
SEARCH = ("retrievefromhoteldb", {"area": "centre", "type": "guesthouse"})
# not in the schema (strict: a violation), dropped by the clemtodd rules (played)
OFF_SCHEMA = ("retrievefromhoteldb", {"area": "centre", "type": "guesthouse", "colour": "red"})


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require("mcp")
    require("httpx2")


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    tokens: list[str]
    stderr: Any

    def stop(self) -> int:
        """SIGTERM, as a supervisor stops it; the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=20)

    def errors(self) -> str:
        self.stderr.seek(0)
        return str(self.stderr.read())


def _lines(process: subprocess.Popen[str], n: int, timeout_s: float) -> list[str]:
    found: list[str] = []
    stdout = process.stdout
    assert stdout is not None

    def read() -> None:
        for _ in range(n):
            found.append(stdout.readline().strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout_s)
    return found


@contextlib.contextmanager
def serve_http(*args: str, tokens: int = 1) -> Iterator[Served]:
    """``todeval serve tools booking ARGS`` over HTTP; stopped (if still running) on exit."""
    with tempfile.TemporaryFile(mode="w+") as stderr:
        argv = [*SERVE, "booking", "--port", "0", "--tokens", str(tokens), *args]
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, text=True
        )
        try:
            lines = _lines(process, 1 + tokens, 60)
            if len(lines) < 1 + tokens or not lines[0].startswith("mcp "):
                process.kill()
                process.wait()
                stderr.seek(0)
                pytest.fail(f"serve tools did not start: {lines} {stderr.read()[-2000:]}")
            assert all(line.startswith("token ") for line in lines[1:])
            url = lines[0].split(" ", 1)[1]
            yield Served(process, url, [line.split(" ", 1)[1] for line in lines[1:]], stderr)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            assert process.stdout is not None
            process.stdout.close()


def text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def expected_tools() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (f["name"], f["description"], f["parameters"])
        for f in (d["function"] for d in tool_definitions("test"))
        if f["name"] != FOLLOWUP
    ]


def game_master_text(protocol: str, call: tuple[str, dict[str, Any]]) -> str:
    """What a built-in system reads for ``call`` from the game master (a fresh DB)."""
    task = load_tasks("test")[0]
    handled = handle_output("test", protocol, list(task.domains), {"name": call[0],
                            "arguments": call[1]})  # fmt: skip
    result = handled.calls[0].result
    assert result is not None
    return result_content(result)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_http_lists_answers_refuses_records_and_stops_on_sigterm(tmp_path: Path) -> None:
    from mcp import MCPError

    from todeval.agents.tool_server import REFUSED

    out = tmp_path / "calls.jsonl"
    with serve_http("-o", str(out), tokens=2) as served:
        first, second = served.tokens
        assert first != second

        async def play() -> dict[str, Any]:
            found: dict[str, Any] = {}
            async with session(served.url) as client:  # listing needs no token
                found["tools"] = list((await client.list_tools()).tools)
                with pytest.raises(MCPError) as refused:
                    await client.call_tool(*SEARCH)
                found["refused"] = refused.value
            async with session(served.url, "not-a-token") as client:
                with pytest.raises(MCPError) as wrong:
                    await client.call_tool(*SEARCH)
                found["wrong"] = wrong.value
            async with session(served.url, first) as client:
                found["search"] = await client.call_tool(*SEARCH)
                found["off_schema"] = await client.call_tool(*OFF_SCHEMA)
                found["followup"] = await client.call_tool(FOLLOWUP, {"message": "hello"})
            async with session(served.url, second) as client:
                found["second"] = await client.call_tool(*SEARCH)
            return found

        found = asyncio.run(play())
        tools = found["tools"]
        assert [(t.name, t.description, t.input_schema) for t in tools] == expected_tools()
        for error in (found["refused"], found["wrong"]):
            assert error.code == REFUSED
        assert "no episode token" in found["refused"].message

        search = found["search"]
        assert not search.is_error
        assert text(search) == game_master_text("clemtodd", SEARCH)
        rows = json.loads(text(search))
        assert rows["total"] > 0 and all(r["type"] == "guesthouse" for r in rows["rows"])
        assert not found["off_schema"].is_error  # clemtodd drops the unknown key and plays it
        assert text(found["off_schema"]) == text(search)
        assert found["followup"].is_error  # not served: the agent's reply is its follow-up
        assert text(found["followup"]).startswith("call rejected: unknown tool")
        assert text(found["second"]) == text(search)

        lines = records(out)  # written (and flushed) while the server still runs
        assert served.stop() == 0, served.errors()
    assert records(out) == lines
    header, *calls = lines
    assert header == {"kind": "serve", "benchmark": "booking", "transport": "http",
                      "task_set": "test", "task_id": load_tasks("test")[0].task_id,
                      "protocol": "clemtodd"}  # fmt: skip
    assert [(c["episode"], c["call"], c["tool"]) for c in calls] == [
        (1, 1, SEARCH[0]), (1, 2, OFF_SCHEMA[0]), (1, 3, FOLLOWUP), (2, 1, SEARCH[0]),
    ]  # fmt: skip
    assert calls[1]["arguments"] == OFF_SCHEMA[1]
    assert [[e["kind"] for e in c["events"]] for c in calls] == [
        ["db_query", "db_result"], ["db_query", "db_result"], ["violation"],
        ["db_query", "db_result"],
    ]  # fmt: skip
    query, result = calls[1]["events"]
    assert query["actor"] == "system" and query["data"] == {"domain": "hotel",
                                                            "arguments": SEARCH[1]}  # fmt: skip
    assert result["actor"] == "game_master" and result["data"]["total"] == rows["total"]
    assert calls[1]["answer"] == {"text": text(search), "is_error": False}
    assert calls[2]["answer"]["is_error"] is True


def test_strict_answers_a_schema_violation_as_a_tool_error(tmp_path: Path) -> None:
    out = tmp_path / "strict.jsonl"
    with serve_http("--protocol", "strict", "-o", str(out)) as served:

        async def play() -> tuple[Any, Any]:
            async with session(served.url, served.tokens[0]) as client:
                return await client.call_tool(*OFF_SCHEMA), await client.call_tool(*SEARCH)

        violation, search = asyncio.run(play())
        assert served.stop() == 0, served.errors()
    assert violation.is_error
    reason = text(violation)
    assert reason.startswith("call rejected: schema violation")
    assert "'colour' was unexpected" in reason
    assert not search.is_error  # the sandbox episode goes on after a violation
    assert text(search) == game_master_text("strict", SEARCH)
    header, rejected, played = records(out)
    assert header["protocol"] == "strict"
    assert [e["kind"] for e in rejected["events"]] == ["violation"]
    assert rejected["events"][0]["data"]["reason"] in reason
    assert rejected["answer"] == {"text": reason, "is_error": True}
    assert [e["kind"] for e in played["events"]] == ["db_query", "db_result"]


def test_stdio_lists_and_answers_without_a_token(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out = tmp_path / "stdio.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "todeval", "serve", "tools", "booking", "--transport", "stdio", "-o", str(out)],
    )

    async def play() -> tuple[list[Any], Any]:
        with tempfile.TemporaryFile(mode="w+") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                tools = list((await client.list_tools()).tools)
                return tools, await client.call_tool(*SEARCH)

    tools, search = asyncio.run(play())
    assert [(t.name, t.description, t.input_schema) for t in tools] == expected_tools()
    assert not search.is_error
    assert text(search) == game_master_text("clemtodd", SEARCH)
    header, call = records(out)
    assert header["transport"] == "stdio"
    assert (call["episode"], call["call"], call["tool"]) == (1, 1, SEARCH[0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown benchmark with tools 'nope'"),
        (["booking", "--tasks", "nope"], "unknown task set 'nope'"),
        (["booking", "--host", "0.0.0.0"], "loopback addresses only"),
        (["booking", "--host", "example.org"], "loopback addresses only"),
        (["booking", "--protocol", "lenient"], "unknown protocol 'lenient'"),
        (["booking", "--task-id", "nope"], "unknown task id(s): nope"),
        (["booking", "--transport", "stdio", "--port", "1"], "--port: only with --transport"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = subprocess.run(
        [*SERVE, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert message in lines[0]
