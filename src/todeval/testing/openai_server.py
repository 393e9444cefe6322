"""A small OpenAI-compatible chat server with scripted replies and injected faults.

Run it as its own process; it prints its port on the first line of stdout (and a ``ready``
line with its URL on stderr)::

    python -m todeval.testing.openai_server --port 0 --script replies.json --error-429 0.1

``--script`` also takes the name of a script shipped with todeval (``todeval/testing/scripts``):
``booking-agent`` is the model of an agent that books the first booking test task
(docs/agents.md's offline quick start).

Endpoints: ``POST /v1/chat/completions``, ``GET /v1/models``, and for tests ``GET /_stats``
(request and fault counts, peak concurrency) and ``GET /_requests`` (the last request bodies;
never the ``Authorization`` header).

Replies come from a :class:`todeval.backends.scripted.Script` (tool calls, plain text, a
verbatim ``raw_body`` such as malformed JSON, usage present or absent, per-reply latency).
``answer_status`` (``--answer-status 403``) answers every completion with that status, as a
server refusing a key or a route does. Faults: 500, 429 with ``Retry-After``, hangs (no
reply), connection resets, malformed and truncated bodies, each at a rate, or as a fixed
``sequence`` for the first attempts of every distinct request body. Decisions are seeded by
(seed, request body, attempt number), so they are the same however requests interleave.
``max_concurrent`` answers 429 above that many requests in flight, like a rate-limited
provider. ``echo_authorization`` (``--echo-authorization``) puts the request's ``Authorization``
header into every error body and every reply's text, as a careless proxy might: what a run
writes must still hold no key.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import socket
import struct
import sys
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from todeval.backends.scripted import Script, ScriptedReply, load_script
from todeval.backends.types import ChatMessage
from todeval.errors import TodevalError
from todeval.serving import serve_until_interrupted

FaultKind = Literal["ok", "500", "429", "hang", "reset", "malformed", "truncated"]
_RATE_ORDER: tuple[FaultKind, ...] = ("500", "429", "hang", "reset", "malformed", "truncated")


class FaultConfig(BaseModel):
    """Injected faults. Rates are probabilities per request, drawn in a fixed order."""

    seed: int = 0
    latency_ms: float = Field(0.0, ge=0, description="delay before every reply")
    error_500: float = Field(0.0, ge=0, le=1)
    error_429: float = Field(0.0, ge=0, le=1)
    retry_after_s: float | None = Field(0.05, ge=0, description="Retry-After of 429 and 503")
    hang: float = Field(0.0, ge=0, le=1, description="read the request, never answer")
    hang_s: float = Field(30.0, ge=0, description="how long a hang lasts before closing")
    reset: float = Field(0.0, ge=0, le=1, description="connection reset, no reply")
    malformed: float = Field(0.0, ge=0, le=1, description="HTTP 200 with a non-JSON body")
    truncated: float = Field(0.0, ge=0, le=1, description="body shorter than Content-Length")
    sequence: list[FaultKind] = Field(
        default_factory=list, description="faults for attempts 0..n-1 of every distinct body"
    )
    max_concurrent: int | None = Field(None, ge=1, description="429 above this many in flight")

    def rate(self, kind: FaultKind) -> float:
        return {
            "500": self.error_500,
            "429": self.error_429,
            "hang": self.hang,
            "reset": self.reset,
            "malformed": self.malformed,
            "truncated": self.truncated,
        }.get(kind, 0.0)


class ServerConfig(BaseModel):
    script: Script = Field(default_factory=Script)
    faults: FaultConfig = Field(default_factory=FaultConfig)
    models: list[str] | None = Field(None, description="known model names; others get 404")
    api_key: str | None = Field(None, description="expected bearer key; others get 401")
    default_usage: bool = Field(True, description="send estimated usage when a reply has none")
    answer_status: int | None = Field(
        None,
        ge=400,
        le=599,
        description="answer every completion with this HTTP status (401, 403, 404, ...)",
    )
    echo_authorization: bool = Field(
        False, description="echo the Authorization header in every error body and reply text"
    )


class ServerState:
    """Counters shared by the handler threads (guarded by one lock)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.attempts: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.requests = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.recent: deque[dict[str, Any]] = deque(maxlen=200)

    def fault_for(self, body: bytes) -> FaultKind:
        digest = hashlib.sha256(body).hexdigest()
        with self.lock:
            attempt = self.attempts[digest]
            self.attempts[digest] += 1
        faults = self.config.faults
        if attempt < len(faults.sequence):
            return faults.sequence[attempt]
        draw = random.Random(f"{faults.seed}:{digest}:{attempt}").random()
        edge = 0.0
        for kind in _RATE_ORDER:
            edge += faults.rate(kind)
            if draw < edge:
                return kind
        return "ok"

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "requests": self.requests,
                "faults": dict(self.faults),
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
            }


def _messages(body: dict[str, Any]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for raw in body.get("messages") or []:
        if not isinstance(raw, dict):
            continue
        role = raw.get("role")
        content = raw.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append(
            ChatMessage(
                role=role if role in ("system", "user", "assistant", "tool") else "user",
                content=content if isinstance(content, str) else None,
            )
        )
    return out


def completion_body(
    reply: ScriptedReply, body: dict[str, Any], default_usage: bool, echo: str | None = None
) -> str:
    """The JSON chat-completion body for a scripted reply (``echo`` appended to its text)."""
    calls = reply.tool_calls_out("call")
    text = f"{reply.text} {echo}".strip() if echo else reply.text
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    elif message["content"] is None:
        message["content"] = ""
    out: dict[str, Any] = {
        "id": "chatcmpl-todeval",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish}],
    }
    if reply.usage is not None:
        out["usage"] = {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
            "total_tokens": reply.usage.prompt_tokens + reply.usage.completion_tokens,
        }
    elif default_usage and not reply.omit_usage:
        prompt = len(json.dumps(body.get("messages", []))) // 4
        completion = (len(reply.text) + sum(len(c.arguments) for c in calls)) // 4
        out["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return json.dumps(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms ACK wait
    server_version = "todeval-test-server"
    state: ServerState  # set on the subclass made by make_server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _echo(self) -> str | None:
        """What ``echo_authorization`` adds to a body: the header as the client sent it."""
        if not self.state.config.echo_authorization:
            return None
        return f"(you sent Authorization: {self.headers.get('Authorization')})"

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        echo = self._echo()
        if echo:
            message = f"{message} {echo}"
        self._send(status, json.dumps({"error": {"message": message, "code": status}}), headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            names = self.state.config.models or ["scripted"]
            data = [{"id": n, "object": "model", "owned_by": "todeval"} for n in names]
            self._send(200, json.dumps({"object": "list", "data": data}))
        elif self.path == "/_stats":
            self._send(200, json.dumps(self.state.stats()))
        elif self.path == "/_requests":
            with self.state.lock:
                recent = list(self.state.recent)
            self._send(200, json.dumps(recent))
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        route = self.path.split("?", 1)[0]  # a query (a proxy's ?api_key=) is not the route
        if route.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route {self.path}")
            return
        state = self.state
        with state.lock:
            state.requests += 1
            state.in_flight += 1
            state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
            over = state.config.faults.max_concurrent
            crowded = over is not None and state.in_flight > over
        try:
            self._complete(raw, crowded)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _count(self, kind: str) -> None:
        with self.state.lock:
            self.state.faults[kind] += 1

    def _complete(self, raw: bytes, crowded: bool) -> None:
        config = self.state.config
        faults = config.faults
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            self._error(400, "request body is not a JSON object")
            return
        with self.state.lock:
            self.state.recent.append(
                {"body": body, "authorization_sent": "Authorization" in self.headers}
            )
        retry_after = (
            {} if faults.retry_after_s is None else {"Retry-After": f"{faults.retry_after_s:g}"}
        )
        if crowded:
            self._count("429_crowded")
            self._error(429, "too many requests in flight", retry_after)
            return
        if config.answer_status is not None:
            self._error(config.answer_status, f"refused with status {config.answer_status}")
            return
        expected = None if config.api_key is None else f"Bearer {config.api_key}"
        if expected is not None and self.headers.get("Authorization") != expected:
            self._error(401, "invalid API key")
            return
        if config.models is not None and body.get("model") not in config.models:
            self._error(404, f"model {body.get('model')!r} not found")
            return
        fault = self.state.fault_for(raw)
        if fault != "ok":
            self._count(fault)
        reply = config.script.select(_messages(body))
        delay = (faults.latency_ms + reply.latency_ms) / 1000.0
        if delay:
            time.sleep(delay)
        if fault == "500":
            self._error(500, "injected server error")
        elif fault == "429":
            self._error(429, "injected rate limit", retry_after)
        elif fault == "hang":
            time.sleep(faults.hang_s)
            self.close_connection = True
        elif fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif fault == "malformed":
            self._send(200, '{"choices": [ {"message": ')
        elif fault == "truncated":
            data = completion_body(reply, body, config.default_usage, self._echo()).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif reply.raw_body is not None:
            self._send(200, reply.raw_body)
        else:
            self._send(200, completion_body(reply, body, config.default_usage, self._echo()))


def make_server(
    config: ServerConfig, host: str = "127.0.0.1", port: int = 0
) -> ThreadingHTTPServer:
    """A ready (not yet serving) server; ``server.server_address[1]`` is its port."""
    handler = type("BoundHandler", (Handler,), {"state": ServerState(config)})
    server = _QuietServer((host, port), handler)
    server.daemon_threads = True
    return server


class _QuietServer(ThreadingHTTPServer):
    """Clients that hang up (timeouts, injected resets) are normal here: no tracebacks."""

    request_queue_size = 1024  # socketserver's default backlog of 5 drops bursts of connects

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def shipped_scripts() -> list[str]:
    """The names of the reply scripts shipped with todeval (``--script NAME``)."""
    folder = resources.files("todeval.testing") / "scripts"
    return sorted(f.name[: -len(".json")] for f in folder.iterdir() if f.name.endswith(".json"))


def script_path(name: Path) -> Path:
    """A script file: ``name`` itself, or else the shipped script of that name."""
    if name.exists() or name.suffix or len(name.parts) > 1:
        return name
    shipped = resources.files("todeval.testing") / "scripts" / f"{name}.json"
    if not shipped.is_file():
        known = ", ".join(shipped_scripts())
        raise ValueError(f"no script file {name} and no shipped script of that name ({known})")
    return Path(str(shipped))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m todeval.testing.openai_server", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    p.add_argument("--config", type=Path, help="a ServerConfig JSON file (script, faults, ...)")
    p.add_argument(
        "--script",
        type=Path,
        help="a script file (JSON or JSONL), as for scripted:, or a shipped script's name "
        "(booking-agent)",
    )
    p.add_argument("--models", help="comma-separated known model names (others: 404)")
    p.add_argument("--seed", type=int)
    p.add_argument("--latency-ms", type=float)
    for name in ("error-500", "error-429", "hang", "reset", "malformed", "truncated"):
        p.add_argument(f"--{name}", type=float, metavar="RATE")
    p.add_argument("--retry-after", type=float, dest="retry_after_s", metavar="SECONDS")
    p.add_argument("--hang-s", type=float)
    p.add_argument("--max-concurrent", type=int)
    p.add_argument(
        "--answer-status", type=int, metavar="STATUS", help="answer every completion with it"
    )
    p.add_argument(
        "--echo-authorization",
        action="store_true",
        default=None,
        help="echo the Authorization header in error bodies and reply texts",
    )
    return p


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    data: dict[str, Any] = {}
    if args.config is not None:
        data = json.loads(args.config.read_text(encoding="utf-8"))
    config = ServerConfig.model_validate(data)
    if args.script is not None:
        config.script = load_script(script_path(args.script))
    if args.models:
        config.models = [m for m in args.models.split(",") if m]
    if args.answer_status is not None:
        config.answer_status = args.answer_status
    if args.echo_authorization:
        config.echo_authorization = True
    fault_args = {
        "seed": args.seed,
        "latency_ms": args.latency_ms,
        "error_500": args.error_500,
        "error_429": args.error_429,
        "hang": args.hang,
        "reset": args.reset,
        "malformed": args.malformed,
        "truncated": args.truncated,
        "retry_after_s": args.retry_after_s,
        "hang_s": args.hang_s,
        "max_concurrent": args.max_concurrent,
    }
    updates = {k: v for k, v in fault_args.items() if v is not None}
    config.faults = FaultConfig.model_validate({**config.faults.model_dump(), **updates})
    return config


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except (OSError, ValueError, ValidationError) as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 3
    except TodevalError as exc:  # a bad script file
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    server = make_server(config, args.host, args.port)
    port = server.server_address[1]
    print(port, flush=True)  # the first line of stdout: what ServerProcess reads
    print(f"ready http://{args.host}:{port}/v1 (Ctrl-C stops it)", file=sys.stderr, flush=True)
    serve_until_interrupted(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
