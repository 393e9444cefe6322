"""A scripted external agent behind a chat endpoint, for tests: one process on 127.0.0.1 that
answers the three channel shapes of :mod:`todeval.agents.channels`.

Run it as its own process; it prints its port on the first line of stdout::

    python -m todeval.testing.chat_agent_server --port 0 --config agent.json

Endpoints (every path answers every shape it is asked for):

* ``POST /v1/chat/completions`` -- ``openai-chat``: the reply is chosen from the whole
  ``messages`` list, answered as a chat completion (``usage`` when the reply has one);
* ``POST /webhooks/rest/webhook`` -- ``rasa-rest``: the reply to ``message``, as a list of bot
  messages (one per line of the reply's text), never with usage;
* ``POST /chat`` -- ``plain``: ``{"reply": text}`` (with ``usage`` when the reply has one);
* ``GET /_requests`` -- the request bodies received, in order (for assertions).

Replies come from a :class:`todeval.backends.scripted.Script` (a regex on the last message ->
the reply; then position replies; then ``default``), as the scripted backend chooses them.
``usage`` reports these counts for every reply that has none of its own (``openai-chat`` and
``plain``); ``fail_paths`` answers HTTP ``fail_status`` (500) on those paths, as a broken agent
does.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from todeval.backends.scripted import Script, ScriptedReply, ScriptedUsage
from todeval.backends.types import ChatMessage
from todeval.serving import serve_until_interrupted
from todeval.testing.server_process import ChildServer

OPENAI_PATH = "/v1/chat/completions"
RASA_PATH = "/webhooks/rest/webhook"
PLAIN_PATH = "/chat"
PATHS = {"openai-chat": OPENAI_PATH, "rasa-rest": RASA_PATH, "plain": PLAIN_PATH}
"""The path of each channel."""


class AgentConfig(BaseModel):
    script: Script = Field(default_factory=Script)
    usage: ScriptedUsage | None = Field(
        None, description="counts reported for replies without their own (openai-chat, plain)"
    )
    fail_paths: list[str] = Field(default_factory=list, description="paths answering an error")
    fail_status: int = 500
    model: str = "scripted-agent"


def _messages(path: str, body: Any) -> list[ChatMessage]:
    if path == OPENAI_PATH:
        found = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(found, list):
            return []
        return [
            ChatMessage(role=m.get("role", "user"), content=str(m.get("content") or ""))
            for m in found
            if isinstance(m, dict) and m.get("role") in ("user", "assistant", "system")
        ]
    message = body.get("message") if isinstance(body, dict) else None
    return [ChatMessage(role="user", content=str(message or ""))]


def _usage(reply: ScriptedReply, config: AgentConfig) -> dict[str, int] | None:
    usage = reply.usage or config.usage
    if usage is None or reply.omit_usage:
        return None
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }


def answer(path: str, body: Any, config: AgentConfig) -> Any:
    """The response body for a request to ``path`` (one of :data:`PATHS`)."""
    reply = config.script.select(_messages(path, body))
    usage = _usage(reply, config)
    if path == RASA_PATH:
        recipient = body.get("sender", "") if isinstance(body, dict) else ""
        return [{"recipient_id": recipient, "text": line} for line in reply.text.split("\n")]
    if path == PLAIN_PATH:
        return {"reply": reply.text, **({"usage": usage} if usage else {})}
    return {
        "id": "chatcmpl-agent",
        "object": "chat.completion",
        "model": config.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": "stop",
            }
        ],
        **({"usage": usage} if usage else {}),
    }


class Handler(BaseHTTPRequestHandler):
    config: AgentConfig  # set on the subclass made by make_server
    received: list[Any]
    lock: threading.Lock

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, data: Any) -> None:
        blob = json.dumps(data).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(blob)))
        self.end_headers()
        self.wfile.write(blob)

    def do_GET(self) -> None:
        if self.path == "/_requests":
            with self.lock:
                self._send(200, list(self.received))
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            self._send(400, {"error": "not JSON"})
            return
        with self.lock:
            self.received.append({"path": self.path, "body": body})
        if self.path in self.config.fail_paths:
            self._send(self.config.fail_status, {"error": "the agent broke (scripted)"})
            return
        if self.path not in PATHS.values():
            self._send(404, {"error": f"no endpoint {self.path}"})
            return
        self._send(200, answer(self.path, body, self.config))


def make_server(config: AgentConfig, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    handler = type(
        "BoundHandler",
        (Handler,),
        {"config": config, "received": [], "lock": threading.Lock()},
    )
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--config", type=Path, help="an AgentConfig as JSON")
    args = parser.parse_args(argv)
    try:
        config = (
            AgentConfig.model_validate_json(args.config.read_text(encoding="utf-8"))
            if args.config
            else AgentConfig()
        )
    except (OSError, ValidationError) as exc:
        print(f"error: {args.config}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    server = make_server(config, args.host, args.port)
    print(server.server_address[1], flush=True)
    serve_until_interrupted(server)
    return 0


class ChatAgentProcess(ChildServer):
    """The scripted agent in a child process; a context manager that stops it on exit."""

    module = "todeval.testing.chat_agent_server"
    noun = "test agent"
    config: AgentConfig

    def __init__(self, config: AgentConfig | None = None, *, start_timeout_s: float = 30.0):
        super().__init__(config or AgentConfig(), start_timeout_s=start_timeout_s)

    def url(self, channel: str) -> str:
        """The chat endpoint of ``channel`` (``openai-chat``, ``rasa-rest``, ``plain``)."""
        return self.root_url + PATHS[channel]

    def requests(self) -> list[dict[str, Any]]:
        """The requests received so far: ``{"path", "body"}``."""
        result: list[dict[str, Any]] = self._get("/_requests")
        return result


if __name__ == "__main__":
    raise SystemExit(main())
