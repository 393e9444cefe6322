"""A small stand-alone chat endpoint for the channel tests: one ThreadingHTTPServer on
127.0.0.1 that speaks ``openai-chat``, ``rasa-rest`` and ``plain``, and misbehaves on request.

    python tests/agents/channel_server.py          # or: python -m tests.agents.channel_server

The first line printed is the port. A request's path is ``/<mode>/<channel path>``, the channel
path being one of ``/v1/chat/completions``, ``/webhooks/rest/webhook``, ``/chat``; the mode:

* ``ok`` -- a reply of the channel's shape, with usage 11 prompt / 5 completion tokens where
  the channel has usage;
* ``empty`` -- as ``ok``, with an empty reply text;
* ``no-usage`` / ``bad-usage`` -- as ``ok``, without usage / with invalid counts (-3, "five");
* ``500`` -- HTTP 500;
* ``echo-422`` -- HTTP 422 echoing the request's ``metadata`` (``mcp`` for ``plain``), as a web
  framework's validation error echoes a field it rejects (FastAPI: ``{"detail": [{"loc",
  "msg", "input"}]}``);
* ``hang`` -- reads the request and answers nothing for 60 s;
* ``malformed`` -- HTTP 200 with a body that is not JSON;
* ``wrong-shape`` -- HTTP 200 with JSON that is not the channel's shape;
* ``bad-item`` -- HTTP 200 with the channel's outer shape holding an item of the wrong type
  (``choices: ["..."]``, a Rasa list holding a string, a ``reply`` that is a list).

``GET /_requests`` returns every POST received, in order: ``{"path", "headers", "body"}``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from todeval.serving import serve_until_interrupted

REPLY = "Hello from the channel server. How can I help?"
USAGE = {"prompt_tokens": 11, "completion_tokens": 5}
BAD_USAGE = {"prompt_tokens": -3, "completion_tokens": "five"}
CHANNEL_OF_PATH = {
    "/v1/chat/completions": "openai-chat",
    "/webhooks/rest/webhook": "rasa-rest",
    "/chat": "plain",
}
HANG_S = 60.0

_lock = threading.Lock()
_received: list[dict[str, Any]] = []


def _ok_body(channel: str, usage: dict[str, Any] | None, text: str = REPLY) -> Any:
    if channel == "rasa-rest":
        return [{"recipient_id": "user", "text": text}]
    extra = {"usage": usage} if usage is not None else {}
    if channel == "plain":
        return {"reply": text, **extra}
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"id": "chatcmpl-channel", "object": "chat.completion", "model": "channel-agent",
            "choices": [choice], **extra}  # fmt: skip


def _wrong_shape(channel: str) -> Any:
    if channel == "rasa-rest":
        return {"text": REPLY}  # an object, not a list of bot messages
    if channel == "plain":
        return {"text": REPLY}  # no "reply"
    return {"choices": [{"message": {"role": "assistant", "content": ["not", "text"]}}]}


def _bad_item(channel: str) -> Any:
    if channel == "rasa-rest":
        return ["not a bot message"]
    if channel == "plain":
        return {"reply": ["not", "text"]}
    return {"choices": ["not a choice"]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, body: Any) -> None:
        self._send(status, json.dumps(body).encode("utf-8"))

    def do_GET(self) -> None:
        if self.path == "/_requests":
            with _lock:
                self._json(200, list(_received))
        else:
            self._json(404, {"error": f"no route {self.path}"})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with _lock:
            _received.append({"path": self.path, "headers": dict(self.headers), "body": body})
        mode, _, rest = self.path.lstrip("/").partition("/")
        channel = CHANNEL_OF_PATH.get(f"/{rest}")
        if channel is None:
            self._json(404, {"error": f"no route {self.path}"})
        elif mode == "ok":
            self._json(200, _ok_body(channel, USAGE))
        elif mode == "empty":
            self._json(200, _ok_body(channel, USAGE, ""))
        elif mode == "no-usage":
            self._json(200, _ok_body(channel, None))
        elif mode == "bad-usage":
            self._json(200, _ok_body(channel, BAD_USAGE))
        elif mode == "500":
            self._json(500, {"error": "the agent crashed"})
        elif mode == "echo-422":
            field = "mcp" if channel == "plain" else "metadata"
            echoed = body.get(field) if isinstance(body, dict) else None
            detail = {"loc": ["body", field], "msg": "Extra inputs are not permitted"}
            self._json(422, {"detail": [{**detail, "input": echoed}]})
        elif mode == "hang":
            time.sleep(HANG_S)
            self.close_connection = True
        elif mode == "malformed":
            self._send(200, b'{"reply": "Hello fr')
        elif mode == "wrong-shape":
            self._json(200, _wrong_shape(channel))
        elif mode == "bad-item":
            self._json(200, _bad_item(channel))
        else:
            self._json(404, {"error": f"no mode {mode}"})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up on a hang
            return
        super().handle_error(request, client_address)


def main() -> int:
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    serve_until_interrupted(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
