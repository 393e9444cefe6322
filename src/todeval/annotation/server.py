"""``todeval annotate serve``: one item at a time on 127.0.0.1, every answer saved at once.

Routes (nothing else is served, no files from disk):

* ``GET /`` -- the page: inline CSS and script, the items embedded as inert JSON (never the
  gold; the key file is not read), a Content-Security-Policy that allows only the page's own
  script by its SHA-256 hash;
* ``GET /api/answers`` -- the annotator's answers so far (``{"answers": {item: [ids]}}``);
* ``POST /api/answer`` -- ``{"item": ID, "choice": [ids]}``, checked against the item,
  appended to the answer file and flushed before the reply.

Requests whose ``Host`` is not a loopback name are refused (DNS rebinding); a POST must be
``application/json`` (so another site cannot send one without a CORS preflight, which is
never granted) and, when it names an ``Origin``, come from the page's own.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from todeval.annotation.items import AnswerLog, Item, answers_path, read_items
from todeval.core import safejson
from todeval.errors import UsageError
from todeval.report import content_security_policy, script_safe_json
from todeval.report.markup import Markup, el, join, void
from todeval.serving import PageHandler, bind, is_loopback, serve_until_interrupted

MAX_BODY = 64 * 1024


def asset(name: str) -> str:
    return files("todeval.annotation").joinpath("assets", name).read_text(encoding="utf-8")


def build_page(items: Sequence[Item], annotator: str, title: str) -> str:
    data = json.dumps(
        {"annotator": annotator, "items": [i.model_dump(mode="json") for i in items]},
        ensure_ascii=False,
    )
    body = join(
        [
            el(
                "header",
                None,
                el("h1", None, title),
                el("span", {"id": "who"}, f"annotator: {annotator}"),
                el("span", {"id": "progress"}, ""),
                el("progress", {"id": "bar", "value": 0, "max": len(items)}),
            ),
            el(
                "main",
                None,
                el(
                    "section",
                    {"id": "item"},
                    el("div", {"id": "position"}, ""),
                    el("div", {"id": "context"}, ""),
                    el("div", {"id": "question"}, ""),
                    el("div", {"id": "choices"}, ""),
                    el("p", {"id": "hint"}, ""),
                ),
                el("section", {"id": "done", "hidden": True}, ""),
                el(
                    "nav",
                    None,
                    el("button", {"id": "prev", "type": "button"}, "← Previous (Backspace)"),
                    el("button", {"id": "next", "type": "button"}, "Next (Enter) →"),
                    el("span", {"id": "status"}, ""),
                ),
            ),
            Markup(
                '<script type="application/json" id="todeval-items">'
                f"{script_safe_json(data)}</script>"
            ),
            el("script", None, Markup(asset("annotate.js"))),
        ]
    )
    head = join(
        [
            void("meta", {"charset": "utf-8"}),
            void(
                "meta",
                {
                    "http-equiv": "Content-Security-Policy",
                    "content": content_security_policy(asset("annotate.js")),
                },
            ),
            void("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
            el("title", None, title),
            el("style", None, Markup(asset("annotate.css"))),
        ]
    )
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, el("head", None, head), body)


@dataclass
class AnnotationState:
    items_path: Path
    annotator: str
    answers_file: Path | None = None
    items: list[Item] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _log: AnswerLog | None = None
    _page: bytes = b""

    def __post_init__(self) -> None:
        self.items = read_items(self.items_path)
        self._by_id = {i.id: i for i in self.items}
        path = self.answers_file or answers_path(self.items_path, self.annotator)
        self._log = AnswerLog(path, self.annotator, self.items_path.stem)
        self._page = build_page(
            self.items, self.annotator, f"todeval annotate: {self.items_path.name}"
        ).encode("utf-8")

    @property
    def log(self) -> AnswerLog:
        assert self._log is not None
        return self._log

    def page(self) -> bytes:
        return self._page

    def answers(self) -> bytes:
        with self._lock:
            out = {k: a.choice for k, a in self.log.answers.items() if k in self._by_id}
        return json.dumps({"answers": out}, ensure_ascii=False).encode("utf-8")

    def answer(self, body: Any) -> str | None:
        """Record one answer; the reason it is refused, or None."""
        if not isinstance(body, dict):
            return "expected a JSON object"
        item_id, choice = body.get("item"), body.get("choice")
        if not isinstance(item_id, str) or item_id not in self._by_id:
            return "unknown item"
        if not isinstance(choice, list) or not all(isinstance(c, str) for c in choice):
            return "choice: a list of candidate ids"
        problem = self._by_id[item_id].check_answer(choice)
        if problem:
            return problem
        with self._lock:
            self.log.record(item_id, choice)
        return None

    def close(self) -> None:
        self.log.close()


_JSON = "application/json; charset=utf-8"


def make_handler(state: AnnotationState, loopback: bool) -> type[PageHandler]:
    class Handler(PageHandler):
        server_version = "todeval-annotate"
        csp = content_security_policy(asset("annotate.js"), header=True)

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send(code, body, ctype)

        def _error(self, code: int, message: str) -> None:
            self._send(code, json.dumps({"error": message}).encode(), _JSON)

        def do_GET(self) -> None:
            if not self.host_ok():
                return
            path = urlsplit(self.path).path
            if path in ("/", "/index.html"):
                self._send(200, state.page(), "text/html; charset=utf-8")
            elif path == "/api/answers":
                self._send(200, state.answers(), _JSON)
            elif path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            else:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_POST(self) -> None:
            if not self.host_ok():
                return
            if urlsplit(self.path).path != "/api/answer":
                self._error(404, "not found")
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                self._error(415, "expected application/json")
                return
            origin = self.headers.get("Origin")
            if origin is not None and origin != f"http://{self.headers.get('Host')}":
                self._error(403, "cross-origin request")
                return
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                length = -1
            if not 0 < length <= MAX_BODY:
                self._error(400, "bad Content-Length")
                return
            try:
                body = safejson.loads(self.rfile.read(length))  # depth-bounded: never a crash
            except (json.JSONDecodeError, UnicodeDecodeError):
                self._error(400, "not JSON (or nested too deeply)")
                return
            problem = state.answer(body)
            if problem:
                self._error(400, problem)
            else:
                self._send(200, b'{"ok": true}', _JSON)

    Handler.loopback = loopback
    return Handler


def make_server(state: AnnotationState, host: str, port: int) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port`` 0 picks a free port."""
    return bind(make_handler(state, is_loopback(host)), host, port)


def serve_items(
    items_path: Path, annotator: str, *, port: int, answers: Path | None, host: str = "127.0.0.1"
) -> int:
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: not a port number (0-65535)")
    if not annotator.replace("-", "").replace("_", "").isalnum():
        raise UsageError(f"--annotator {annotator!r}: use letters, digits, - and _")
    state = AnnotationState(items_path, annotator, answers)
    try:
        server = make_server(state, host, port)
    except OSError as exc:
        state.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port"
        ) from None
    bound = int(server.server_address[1])
    if state.log.set_aside is not None:
        print(
            f"note: the torn last line of {state.log.path} (a write cut short) was moved to "
            f"{state.log.set_aside}",
            file=sys.stderr,
        )
    done = len(state.log.answers)
    print(
        f"serving {len(state.items)} item(s) at http://{host}:{bound}/ for {annotator} "
        f"({done} answered; answers in {state.log.path}; Ctrl-C to stop)",
        flush=True,
    )
    serve_until_interrupted(server, on_close=state.close)
    return 0


__all__ = ["AnnotationState", "build_page", "make_server", "serve_items"]
