"""A benchmark's tools served over the Model Context Protocol (official ``mcp`` SDK).

The server lists the tools with their JSON schemas and hands every ``tools/call`` to the
*line* of the episode it belongs to; the line's handler (an episode's game master, or a
sandbox) validates and answers it. The server itself validates nothing: a malformed call
reaches the game master exactly as a built-in system's would.

Episode tokens: every call must carry the token of an open episode, either for the whole
connection in the ``Authorization: Bearer <token>`` header (streamable HTTP) or in the call's
``_meta`` under ``todeval/episode_token``. A call without a token, or with one that names no
open episode, is refused with a JSON-RPC error (code :data:`REFUSED`); listing tools needs no
token. Over stdio the connection is the spawning client's own pipe: a server started with a
``stdio_line`` answers token-less calls on that line.

Transports: streamable HTTP on a loopback address (MCP sessions, SSE responses; the server runs
in its own thread with its own event loop, so episodes on any event loop can use it), and
stdio.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field

from todeval.errors import UsageError
from todeval.serving import is_loopback

REFUSED = -32001
"""JSON-RPC error code of a call refused for its episode token."""
TOKEN_META_KEY = "todeval/episode_token"
MCP_PATH = "/mcp"


class ToolSpec(BaseModel):
    """One tool as an MCP client lists it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class ToolAnswer(BaseModel):
    """A tool call's result as the agent reads it: text, flagged when the call failed."""

    text: str
    is_error: bool = False


LineHandler = Callable[[str, "dict[str, Any] | str"], Awaitable[ToolAnswer]]
"""Answers one call (tool name, arguments as sent) of one episode; runs on the server's loop."""


def tool_specs(
    definitions: list[dict[str, Any]], *, leave_out: tuple[str, ...] = ()
) -> list[ToolSpec]:
    """ToolSpecs from OpenAI-style function definitions (``{"type": "function", "function":
    {"name", "description", "parameters"}}``), the schemas built-in systems are given."""
    out = []
    for definition in definitions:
        function = definition.get("function", definition)
        if function["name"] in leave_out:
            continue
        out.append(
            ToolSpec(
                name=function["name"],
                description=function.get("description", ""),
                input_schema=function.get("parameters") or {"type": "object"},
            )
        )
    return out


def new_token() -> str:
    return secrets.token_urlsafe(24)


class ToolServer:
    """An MCP server for one set of tools and the episodes (lines) open on it."""

    def __init__(
        self,
        tools: list[ToolSpec],
        *,
        name: str = "todeval",
        host: str = "127.0.0.1",
        port: int = 0,
        stdio_line: LineHandler | None = None,
    ) -> None:
        if not is_loopback(host):
            raise UsageError(f"the tool server binds loopback addresses only, not {host!r}")
        self.tools = tools
        self.name = name
        self.host = host
        self.port = port
        self.stdio_line = stdio_line
        self._lines: dict[str, LineHandler] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._uvicorn: Any = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self.calls = 0
        self.refused = 0

    # --- episodes ------------------------------------------------------------------------

    def open_line(self, handler: LineHandler) -> str:
        """A new episode token whose calls go to ``handler``."""
        token = new_token()
        with self._lock:
            self._lines[token] = handler
        return token

    def close_line(self, token: str) -> None:
        """Later calls with ``token`` are refused."""
        with self._lock:
            self._lines.pop(token, None)

    def _line(self, token: str | None) -> LineHandler | None:
        if token is None:
            return None
        with self._lock:
            return self._lines.get(token)

    # --- MCP -----------------------------------------------------------------------------

    def mcp_server(self) -> Any:
        """The SDK's low-level server with this server's handlers."""
        import mcp_types as types
        from mcp.server.lowlevel.server import Server
        from mcp.shared.exceptions import MCPError

        listed = [
            types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
            for t in self.tools
        ]

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=listed)

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            self.calls += 1
            token = _token_of(ctx, params)
            line = self._line(token)
            if line is None and token is None and ctx.request is None:
                line = self.stdio_line
            if line is None:
                self.refused += 1
                why = "no episode token" if token is None else "no open episode has this token"
                raise MCPError(
                    code=REFUSED,
                    message=f"refused: {why} (send 'Authorization: Bearer <token>' or "
                    f"_meta['{TOKEN_META_KEY}'])",
                )
            arguments = params.arguments if params.arguments is not None else {}
            answer = await line(params.name, arguments)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=answer.text)],
                is_error=answer.is_error,
            )

        return Server(self.name, on_list_tools=list_tools, on_call_tool=call_tool)

    # --- streamable HTTP -----------------------------------------------------------------

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"

    def start_http(self) -> str:
        """Serve over streamable HTTP in a thread of its own (once); the endpoint's URL."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve_http, name="todeval-mcp", daemon=True
                )
                self._thread.start()
        self._started.wait(30)
        if self._error is not None:
            raise UsageError(f"cannot start the MCP tool server: {self._error}")
        if not self._started.is_set():
            raise UsageError("the MCP tool server did not start within 30 s")
        return self.url

    def _serve_http(self) -> None:
        try:
            import uvicorn

            # Sessions and SSE responses: a call then takes about 6 ms on loopback; stateless
            # JSON responses took about 48 ms (bench/bench_agent_mcp.py, docs/agents.md).
            app = self.mcp_server().streamable_http_app(
                streamable_http_path=MCP_PATH, json_response=False, stateless_http=False,
                host=self.host,
            )  # fmt: skip
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            self.port = sock.getsockname()[1]
            config = uvicorn.Config(
                app, log_level="critical", access_log=False, lifespan="on",
                timeout_keep_alive=30, timeout_graceful_shutdown=2,
            )  # fmt: skip
            self._uvicorn = uvicorn.Server(config)
            logging.getLogger("mcp").setLevel(logging.CRITICAL)
            asyncio.run(self._run_uvicorn(sock))
        except BaseException as exc:  # reported to the thread that waits in start_http
            self._error = exc
            self._started.set()

    async def _run_uvicorn(self, sock: socket.socket) -> None:
        server = self._uvicorn
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        self._started.set()
        await task

    def stop(self) -> None:
        """Stop serving HTTP (waits for the thread); open lines are dropped."""
        with self._lock:
            self._lines.clear()
            thread = self._thread
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if thread is not None:
            thread.join(10)

    # --- stdio ---------------------------------------------------------------------------

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until it closes."""
        from mcp.server.stdio import stdio_server

        server = self.mcp_server()
        with contextlib.suppress(asyncio.CancelledError):
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())


def _token_of(ctx: Any, params: Any) -> str | None:
    """The episode token of a call: its ``_meta`` entry, else the connection's bearer token."""
    meta = getattr(params, "meta", None)
    if isinstance(meta, dict):
        value = meta.get(TOKEN_META_KEY)
        if isinstance(value, str) and value:
            return value
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is not None:
        auth = headers.get("authorization") or ""
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None
