"""``todeval serve tools NAME``: a benchmark's tools over MCP on their own, against a sandbox.

Any benchmark that registered a tool surface (:meth:`~todeval.registry.Registry.tool_surface`)
can be served: its factory builds the tools and sandbox episodes from ``--tasks``,
``--task-id`` and ``--protocol`` (:mod:`todeval.agents.sandbox`). Every call is answered as the
benchmark's game master answers it in a run and, with ``-o FILE``, written to a JSONL file (one
line per call, flushed at once) with the events the game master records for it.

* ``--transport http`` (default): streamable HTTP on loopback. The first lines on stdout are
  ``mcp URL`` and one ``token TOKEN`` per sandbox episode (``--tokens N``); a call needs its
  episode's token (``Authorization: Bearer TOKEN``). Ctrl-C or SIGTERM stops (exit 0).
* ``--transport stdio``: MCP on stdin/stdout and nothing else on stdout; the connection is
  one sandbox episode (no token). Ends when the client closes stdin (or on SIGTERM).
* ``--transport stdio --connect URL``: no sandbox; a bridge to a *run's* tool server (the MCP
  URL an agent is handed), every call forwarded with the episode token of
  ``TODEVAL_EPISODE_TOKEN`` (:mod:`todeval.agents.bridge`), for agents that start their tools
  as a stdio subprocess.

This module is imported by discovery: it imports nothing heavy until the command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from todeval.registry import Command, Registry

if TYPE_CHECKING:
    from todeval.agents.sandbox import SandboxCall, SandboxEpisode, ToolSandbox
    from todeval.agents.tool_server import LineHandler, ToolAnswer

DEFAULT_HOST = "127.0.0.1"
MAX_TOKENS = 1000
TOOLS_HELP = "a benchmark's tools over MCP (HTTP on loopback or stdio) against a sandbox episode"


def register(registry: Registry) -> None:
    registry.group("serve", "serve a benchmark's parts on their own (loopback or stdio only)")
    registry.add(
        "serve",
        Command(
            "tools",
            TOOLS_HELP,
            lambda parser: add_arguments(parser, registry),
            lambda args: run_command(args, registry),
        ),
    )


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    names = ", ".join(sorted(registry.tool_surfaces)) or "none registered"
    parser.add_argument("name", metavar="NAME", help=f"benchmark with tools: {names}")
    parser.add_argument("--tasks", metavar="SET", help="the benchmark's task selection")
    parser.add_argument(
        "--task-id", metavar="ID", help="the task the sandbox episodes play (default: the first)"
    )
    parser.add_argument(
        "--protocol", metavar="NAME", help="the benchmark's rules for tool calls (e.g. strict)"
    )
    parser.add_argument(
        "--transport", choices=("http", "stdio"), default="http", help="default http"
    )
    parser.add_argument(
        "--host", help=f"HTTP: loopback address to bind (default {DEFAULT_HOST}; no other)"
    )
    parser.add_argument("--port", type=int, help="HTTP: port (default 0: any free port)")
    parser.add_argument(
        "--tokens", type=int, metavar="N", help="HTTP: sandbox episodes, one token each (default 1)"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write every call as JSONL (flushed per call)"
    )
    parser.add_argument(
        "--connect",
        metavar="URL",
        help="stdio: forward to a run's MCP tool server (loopback URL) with the episode token "
        "in TODEVAL_EPISODE_TOKEN, instead of a sandbox",
    )


def run_command(args: argparse.Namespace, registry: Registry) -> int:
    from todeval.agents.sandbox import SandboxOptions
    from todeval.errors import UsageError, choice_error
    from todeval.serving import is_loopback

    surface = registry.tool_surfaces.get(args.name)
    if surface is None:
        raise choice_error("benchmark with tools", args.name, list(registry.tool_surfaces))
    http = args.transport == "http"
    if args.connect is not None:
        return _bridge(args)
    if not http:
        given = [f"--{o}" for o in ("host", "port", "tokens") if getattr(args, o) is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: only with --transport http")
    host = args.host if args.host is not None else DEFAULT_HOST
    if not is_loopback(host):
        raise UsageError(f"--host {host}: the tools are served on loopback addresses only")
    port = args.port if args.port is not None else 0
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: not a port number (0-65535)")
    tokens = args.tokens if args.tokens is not None else 1
    if not 1 <= tokens <= MAX_TOKENS:
        raise UsageError(f"--tokens {tokens}: between 1 and {MAX_TOKENS}")
    factory = surface.load()
    sandbox: ToolSandbox = factory(SandboxOptions(args.tasks, args.task_id, args.protocol))
    calls = CallLog(Path(args.output) if args.output else None)
    try:
        calls.header(benchmark=surface.name, transport=args.transport, **sandbox.about)
        if http:
            return _serve_http(sandbox, calls, host, port, tokens)
        return _serve_stdio(sandbox, calls)
    finally:
        calls.close()


class CallLog:
    """The ``-o`` file: a header line, then one line per call, each flushed at once."""

    def __init__(self, path: Path | None) -> None:
        from todeval.errors import UsageError

        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        if path is not None:
            try:
                self._file = path.open("w", encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"-o {path}: cannot write ({exc.strerror or exc})") from None

    def header(self, **data: Any) -> None:
        self._write({"kind": "serve", **data})

    def call(
        self, episode: int, n: int, tool: str, arguments: dict[str, Any] | str, call: SandboxCall
    ) -> None:
        from todeval.core import safejson

        recorded: Any = arguments
        try:
            safejson.check_depth(arguments)
        except safejson.JsonDepthError as exc:
            recorded = f"<arguments {exc}>"
        self._write(
            {
                "kind": "call",
                "episode": episode,
                "call": n,
                "tool": tool,
                "arguments": recorded,
                "answer": call.answer.model_dump(),
                "events": call.events,
            }
        )

    def _write(self, record: dict[str, Any]) -> None:
        from todeval.core.safejson import repair_surrogates

        line = json.dumps(repair_surrogates(record), ensure_ascii=False, default=str)
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def episode_line(number: int, episode: SandboxEpisode, calls: CallLog) -> LineHandler:
    """The tool server's handler for one sandbox episode: answer, then record, each call."""
    count = 0

    async def handle(tool: str, arguments: dict[str, Any] | str) -> ToolAnswer:
        nonlocal count
        count += 1
        answered = episode(tool, arguments)
        calls.call(number, count, tool, arguments, answered)
        return answered.answer

    return handle


def _banner(sandbox: ToolSandbox, where: str) -> str:
    about = ", ".join(f"{k} {v}" for k, v in sandbox.about.items())
    return f"todeval: serving {len(sandbox.tools)} tool(s) of {sandbox.name} {where} ({about})"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM (also in the background, where SIGINT may be ignored) stop serving:
    the block ends quietly and the previous signal handlers are restored."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    except KeyboardInterrupt:
        print("todeval: stopped", file=sys.stderr, flush=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve_http(sandbox: ToolSandbox, calls: CallLog, host: str, port: int, tokens: int) -> int:
    from todeval.agents.tool_server import ToolServer

    server = ToolServer(sandbox.tools, name=sandbox.name, host=host, port=port)
    issued = [
        server.open_line(episode_line(i, sandbox.new_episode(), calls))
        for i in range(1, tokens + 1)
    ]
    try:
        with _stopped_by_signals():
            url = server.start_http()
            lines = [f"mcp {url}", *(f"token {token}" for token in issued)]
            print("\n".join(lines), flush=True)
            print(
                _banner(sandbox, f"at {url}") + f"; {tokens} episode token(s); Ctrl-C stops",
                file=sys.stderr,
                flush=True,
            )
            idle = threading.Event()
            while True:
                idle.wait(0.25)
    finally:
        server.stop()
    return 0


def _serve_stdio(sandbox: ToolSandbox, calls: CallLog) -> int:
    from todeval.agents.tool_server import ToolServer

    server = ToolServer(
        sandbox.tools, name=sandbox.name, stdio_line=episode_line(1, sandbox.new_episode(), calls)
    )
    return _until_stdin_closes(server.run_stdio, _banner(sandbox, "over stdio"))


def _bridge(args: argparse.Namespace) -> int:
    import os
    from urllib.parse import urlsplit

    from todeval.agents.bridge import TOKEN_ENV, serve_stdio_bridge
    from todeval.errors import UsageError
    from todeval.serving import is_loopback

    others = ("tasks", "task_id", "protocol", "host", "port", "tokens", "output")
    given = [f"--{o.replace('_', '-')}" for o in others if getattr(args, o) is not None]
    if args.transport != "stdio" or given:
        raise UsageError("--connect goes with --transport stdio alone (no sandbox options)")
    url = urlsplit(args.connect)
    if url.scheme != "http" or not is_loopback(url.hostname or ""):
        raise UsageError(f"--connect {args.connect}: a run's tool server on loopback (http://)")
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise UsageError(f"--connect needs the episode token in the environment: {TOKEN_ENV}")
    return _until_stdin_closes(
        lambda: serve_stdio_bridge(args.connect, token),
        f"todeval: forwarding stdio to {args.connect}",
    )


def _until_stdin_closes(serve: Callable[[], Coroutine[Any, Any, None]], banner: str) -> int:
    """Serve until the client closes stdin, or a signal. The event loop runs in a daemon
    thread: its read of stdin blocks in a worker thread that no cancellation can wake, so on a
    signal the process ends without waiting for it (every call is already written)."""
    import asyncio

    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # re-raised in the main thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="todeval-mcp-stdio", daemon=True)
    with _stopped_by_signals():
        print(banner, file=sys.stderr, flush=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.25)
    if failed:
        raise failed[0]
    return 0
