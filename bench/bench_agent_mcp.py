"""What the agent path costs: the MCP hop of a tool call against a built-in system's call.

Two runs of the booking benchmark over the same tasks (agenda user, the test set's 117 tasks by
default), each against its own latency-simulating model server (the scripted test server with
``--latency-ms`` per reply):

* built-in: ``--system monolithic`` -- per user turn, one model call that searches the hotel DB,
  then one that sends the follow-up; the game master runs the search in-process;
* agent: ``--system agent`` with ``examples/agents_sdk_agent.py`` (OpenAI Agents SDK) on the
  same model calls -- the search is an MCP tool call to the run's tool server, the reply ends
  the turn.

Then the hop on its own: the same DB search answered in-process by the game master's code (the
booking tool sandbox, what the game master does for a built-in system's call) and over MCP
(``todeval serve tools booking`` in its own process, one official-SDK client session, calls in
sequence).

Printed: each run's wall time and episodes; the built-in system's call (its model call's
latency, p50 from ``summary.json``); the agent's tool calls as the agent timed them (start to
result through MCP, p50 and mean, from the example's ``--timing-log``); the bare MCP hop
(over-MCP p50 minus in-process p50); each as a ratio to the built-in call (how much a tool call
over MCP adds, in units of one built-in system output); and the agent's reply latency against
the built-in call. No timed assertion.

Run: python bench/bench_agent_mcp.py [--limit 117] [--latency-ms 50] [--max-concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from todeval.backends.scripted import Script, ScriptedReply, ScriptedToolCall, ScriptRule
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "agents_sdk_agent.py"
RESULT = r'^\{"(total|ok)"'  # the last message is a tool result: the model answers in text
SEARCH = ScriptedToolCall(name="retrievefromhoteldb", arguments={"area": "north"})
TEXT = "Several hotels in the north match. How many people, which day, how many nights?"


def script(agent: bool) -> Script:
    """Per user turn: one DB search, then the reply (text for the agent, a followup call for the
    built-in system, whose reply must be a tool call)."""
    answer = (
        ScriptedReply(text=TEXT)
        if agent
        else ScriptedReply(
            tool_calls=[ScriptedToolCall(name="followup", arguments={"message": TEXT})]
        )
    )
    return Script(
        rules=[ScriptRule(match=RESULT, reply=answer)],
        default=ScriptedReply(tool_calls=[SEARCH]),
    )


def start_agent(model_url: str, timing_log: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--port", "0", "--model-url", model_url,
         "--model", "scripted", "--timing-log", str(timing_log)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    line: list[str] = []
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(60)
    ready = re.match(r"ready http://[\d.]+:(\d+) ", line[0] if line else "")
    if ready is None:
        proc.kill()
        raise SystemExit("the example agent did not start (is openai-agents installed?)")
    return proc, int(ready.group(1))


def run(args: list[str], out: Path) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "todeval", "run", "booking", *args, "--out", str(out), "--quiet",
         "--no-cache"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - started
    return wall, json.loads((out / "summary.json").read_text())


def hop(calls: int) -> tuple[float, float]:
    """p50 seconds of one DB search: in-process (game master code only) and over MCP."""
    import asyncio

    from todeval.agents.client import mcp_session
    from todeval.agents.sandbox import SandboxOptions
    from todeval.benchmarks.booking.tool_sandbox import tool_sandbox

    name, arguments = SEARCH.name, dict(SEARCH.arguments)  # type: ignore[arg-type]
    episode = tool_sandbox(SandboxOptions()).new_episode()
    local = []
    for _ in range(calls):
        started = time.perf_counter()
        episode(name, arguments)
        local.append(time.perf_counter() - started)
    server = subprocess.Popen(
        [sys.executable, "-m", "todeval", "serve", "tools", "booking", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    url = server.stdout.readline().split()[1]
    token = server.stdout.readline().split()[1]

    async def remote() -> list[float]:
        async with mcp_session(url, token) as session:
            await session.call_tool(name, arguments)  # warm-up
            out = []
            for _ in range(calls):
                started = time.perf_counter()
                await session.call_tool(name, arguments)
                out.append(time.perf_counter() - started)
            return out

    try:
        over_mcp = asyncio.run(remote())
    finally:
        server.terminate()
        server.wait(10)
    return p50(local), p50(over_mcp)


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=117)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--max-concurrency", type=int, default=8)
    parser.add_argument("--hop-calls", type=int, default=300, help="calls timed for the bare hop")
    opts = parser.parse_args()
    common = ["--limit", str(opts.limit), "--limit-mode", "first",
              "--max-concurrency", str(opts.max_concurrency)]  # fmt: skip
    faults = FaultConfig(latency_ms=opts.latency_ms)
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        work = Path(tmp)
        with ServerProcess(ServerConfig(script=script(agent=False), faults=faults)) as model:
            builtin_wall, builtin = run(
                ["--system", "monolithic", "--system-model", f"openai:scripted@{model.base_url}",
                 *common],
                work / "builtin",
            )  # fmt: skip
        timing = work / "tools.jsonl"
        with ServerProcess(ServerConfig(script=script(agent=True), faults=faults)) as model:
            agent, port = start_agent(model.base_url, timing)
            try:
                url = f"http://127.0.0.1:{port}/v1/chat/completions"
                agent_wall, agent_summary = run(
                    ["--system", "agent", "--system-url", url, *common], work / "agent"
                )
            finally:
                agent.terminate()
                agent.wait(10)
        tools = [json.loads(line)["seconds"] for line in timing.read_text().splitlines()]
    local, over_mcp = hop(opts.hop_calls)

    def episodes(summary: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(summary["outcomes"].items()) if v)

    builtin_call = builtin["latency"]["system"]["p50"]
    agent_reply = agent_summary["latency"]["system"]["p50"]
    mcp_p50, mcp_mean = p50(tools), statistics.fmean(tools) if tools else float("nan")
    print(f"model server latency per reply: {opts.latency_ms:g} ms; tasks: {opts.limit}, "
          f"concurrency {opts.max_concurrency}")  # fmt: skip
    print(f"built-in (monolithic): {builtin_wall:.1f} s wall; {episodes(builtin)}; "
          f"{builtin['usage']['system']['calls']} system calls")  # fmt: skip
    replies = agent_summary["usage"]["system"]["calls"]
    print(f"agent (Agents SDK over MCP): {agent_wall:.1f} s wall; {episodes(agent_summary)}; "
          f"{replies} replies, {len(tools)} MCP tool calls")  # fmt: skip
    print(f"built-in system call (one model call + the game master), p50: "
          f"{builtin_call * 1000:.1f} ms")  # fmt: skip
    print(f"MCP tool call as the agent sees it (start to result), p50: {mcp_p50 * 1000:.1f} ms, "
          f"mean {mcp_mean * 1000:.1f} ms")  # fmt: skip
    print(f"ratio of that tool call to the built-in call: {mcp_p50 / builtin_call:.3f} (p50)")
    bare = over_mcp - local
    print(f"the same search in-process (game master code): {local * 1000:.2f} ms; over MCP "
          f"(todeval serve tools, one session): {over_mcp * 1000:.2f} ms; the bare hop "
          f"{bare * 1000:.2f} ms = {bare / builtin_call:.3f} of a built-in call")  # fmt: skip
    print(f"agent reply (2 model calls, 1 MCP call), p50: {agent_reply * 1000:.1f} ms = "
          f"{agent_reply / builtin_call:.2f} built-in calls (ideal 2 + MCP ratio)")  # fmt: skip
    print(f"wall time ratio agent / built-in: {agent_wall / builtin_wall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
