"""A booking agent built with the OpenAI Agents SDK, evaluated by todeval through its own chat
endpoint while it uses todeval's booking tools over MCP.

    pip install openai-agents            # the agent framework (todeval[agents] has it)
    python examples/agents_sdk_agent.py --port 8770 --model-url http://127.0.0.1:8000/v1 \\
        --model my-model
    todeval run booking --system agent --system-url http://127.0.0.1:8770/v1/chat/completions

The agent is an ordinary Agents SDK agent: instructions, an OpenAI-compatible chat model, and
one MCP server for its tools. The only todeval-specific part is where the MCP server is: every
request from todeval names the run's MCP endpoint and this episode's token (headers
``X-Todeval-Mcp-Url`` and ``X-Todeval-Episode-Token``, or the body's ``metadata`` /
``mcp``), and the agent connects there with ``Authorization: Bearer <token>``.

It answers on all three channel shapes todeval speaks (see docs/agents.md):

* ``POST /v1/chat/completions`` -- ``--channel openai-chat`` (the default): the whole dialogue
  in ``messages``; the reply is a chat completion with the agent's summed token usage;
* ``POST /webhooks/rest/webhook`` -- ``--channel rasa-rest``: ``{"sender", "message",
  "metadata"}``, the dialogue kept here per sender;
* ``POST /chat`` -- ``--channel plain``: ``{"conversation_id", "message", "mcp"}``.

The model key, if the model server needs one, is read from ``AGENT_MODEL_API_KEY``. Tracing
is disabled: nothing leaves this machine but requests to the model server and the MCP server.
Once it listens it prints one line, ``ready http://HOST:PORT (...)`` (starting takes some
seconds: the Agents SDK is a large import); with ``--port 0`` the OS picks a free port. With
``--timing-log FILE`` every tool call's duration as the agent sees it (the MCP round trip) is
appended to FILE as a JSON line (``bench/bench_agent_mcp.py`` reads it). With
``--mcp-transport stdio`` the agent starts its tools as a subprocess speaking MCP on stdio
(``todeval serve tools booking --transport stdio --connect URL``, the token in
``TODEVAL_EPISODE_TOKEN``), which forwards every call to the run's tool server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from agents import (  # imported after tracing is disabled
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    RunHooks,
    Runner,
    Tool,
    set_tracing_disabled,
)
from agents.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp
from openai import AsyncOpenAI

INSTRUCTIONS = """You are the booking assistant of a Cambridge travel information desk.
You help visitors find and book restaurants, hotels and trains, and find attractions and taxis.
Use the search tools to look venues up and the booking tools to make bookings; never invent a
venue, a detail or a reference number. Ask for what you still need (people, day, time, nights)
before booking. Keep replies short and friendly."""


def settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "model_url": args.model_url,
        "model": args.model,
        "max_turns": args.max_turns,
        "timing_log": args.timing_log,
        "mcp_transport": args.mcp_transport,
    }


class ToolTimer(RunHooks[Any]):
    """Appends each tool call's duration (start to result, as the agent sees it) to a file."""

    lock = threading.Lock()

    def __init__(self, path: str) -> None:
        self.path = path
        self.started: dict[str, float] = {}

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Any, tool: Tool) -> None:
        self.started[tool.name] = time.perf_counter()

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Any, tool: Tool, result: object
    ) -> None:
        seconds = time.perf_counter() - self.started.pop(tool.name, time.perf_counter())
        line = json.dumps({"tool": tool.name, "seconds": round(seconds, 6)})
        with self.lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def tools_server(url: str, token: str, transport: str) -> MCPServer:
    """The run's tools: over streamable HTTP, or through a stdio subprocess that forwards to
    the same server (``todeval serve tools booking --transport stdio --connect URL``)."""
    if transport == "stdio":
        command = [sys.executable, "-m", "todeval", "serve", "tools", "booking"]
        return MCPServerStdio(
            params={
                "command": command[0],
                "args": [*command[1:], "--transport", "stdio", "--connect", url],
                "env": {**os.environ, "TODEVAL_EPISODE_TOKEN": token},
            },
            name="todeval-booking",
            cache_tools_list=True,
            client_session_timeout_seconds=120,
        )
    return MCPServerStreamableHttp(
        params={"url": url, "headers": {"Authorization": f"Bearer {token}"}},
        name="todeval-booking",
        cache_tools_list=True,
        client_session_timeout_seconds=120,
    )


class BookingAgent:
    """The agent: one event loop (in a thread of its own) and one model client for every
    request; each reply connects to the MCP server named in its request."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="agent-loop", daemon=True).start()
        self.model = asyncio.run_coroutine_threadsafe(self._model(), self.loop).result()

    async def _model(self) -> OpenAIChatCompletionsModel:
        client = AsyncOpenAI(
            base_url=self.config["model_url"],
            api_key=os.environ.get("AGENT_MODEL_API_KEY", "unused"),
        )
        return OpenAIChatCompletionsModel(model=self.config["model"], openai_client=client)

    def reply(
        self, history: list[dict[str, str]], mcp_url: str | None, token: str | None
    ) -> tuple[str, dict[str, int]]:
        """One turn (called from a request thread): the reply and the tokens it used."""
        turn = self._turn(history, mcp_url, token)
        return asyncio.run_coroutine_threadsafe(turn, self.loop).result()

    async def _turn(
        self, history: list[dict[str, str]], mcp_url: str | None, token: str | None
    ) -> tuple[str, dict[str, int]]:
        transport = self.config["mcp_transport"]
        servers = [tools_server(mcp_url, token, transport)] if mcp_url and token else []
        agent = Agent(
            name="booking assistant",
            instructions=INSTRUCTIONS,
            model=self.model,
            model_settings=ModelSettings(temperature=0.0),
            mcp_servers=servers,
        )
        try:
            for server in servers:
                await server.connect()
            log = self.config.get("timing_log")
            result = await Runner.run(
                agent,
                input=history,  # type: ignore[arg-type]
                max_turns=self.config["max_turns"],
                hooks=ToolTimer(log) if log else None,
            )
        finally:
            for server in servers:
                await server.cleanup()
        usage = result.context_wrapper.usage
        counts = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens}
        return str(result.final_output or ""), counts


class AgentHandler(BaseHTTPRequestHandler):
    agent: ClassVar[BookingAgent]
    dialogues: ClassVar[dict[str, list[dict[str, str]]]] = {}
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": "body is not JSON"})
            return
        mcp_url = self.headers.get("X-Todeval-Mcp-Url")
        token = self.headers.get("X-Todeval-Episode-Token")
        try:
            if self.path == "/v1/chat/completions":
                history = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
                text, usage = self.agent.reply(history, mcp_url, token)
                self._send(200, completion(text, usage, self.agent.config["model"]))
            elif self.path == "/webhooks/rest/webhook":
                text, _ = self._stateful(str(body["sender"]), str(body["message"]), mcp_url, token)
                self._send(200, [{"recipient_id": body["sender"], "text": text}])
            elif self.path == "/chat":
                mcp = body.get("mcp") or {}
                text, usage = self._stateful(
                    str(body["conversation_id"]),
                    str(body["message"]),
                    mcp.get("url", mcp_url),
                    mcp.get("token", token),
                )
                self._send(200, {"reply": text, "usage": usage})
            else:
                self._send(404, {"error": f"no route {self.path}"})
        except Exception as exc:  # the agent failed: an error status, as a deployed one gives
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _stateful(
        self, conversation: str, message: str, mcp_url: str | None, token: str | None
    ) -> tuple[str, dict[str, int]]:
        """Channels that send one message: the dialogue is kept here, per conversation."""
        with self.lock:
            history = self.dialogues.setdefault(conversation, [])
            history.append({"role": "user", "content": message})
            sent = list(history)
        text, usage = self.agent.reply(sent, mcp_url, token)
        with self.lock:
            history.append({"role": "assistant", "content": text})
        return text, usage


def completion(text: str, usage: dict[str, int], model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-agent",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8770)
    parser.add_argument("--model-url", required=True, help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--model", default="default", help="model name at that server")
    parser.add_argument("--max-turns", type=int, default=20, help="agent loop steps per reply")
    parser.add_argument("--timing-log", default=None, help="append tool-call durations here")
    parser.add_argument(
        "--mcp-transport",
        choices=("http", "stdio"),
        default="http",
        help="reach the run's tools over HTTP (default) or through a stdio subprocess",
    )
    args = parser.parse_args(argv)
    set_tracing_disabled(True)
    AgentHandler.agent = BookingAgent(settings(args))
    server = ThreadingHTTPServer((args.host, args.port), AgentHandler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    routes = "POST /v1/chat/completions, /webhooks/rest/webhook or /chat"
    print(f"ready http://{host}:{port} ({routes})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
