"""``todeval view``: the report of every run under a directory, served on loopback.

Routes: ``/`` (the report, rebuilt when any run file changed) and ``/version.json`` (a hash of
the run files' sizes and modification times; the page polls it and reloads when it changes).
Nothing else is served -- no files from disk -- and requests whose ``Host`` header does not name
a loopback address are refused when bound to loopback (a guard against DNS rebinding).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from todeval.report._inputs import discover_inputs, watch_files
from todeval.report._page import DEFAULT_TITLE, asset, build_html, content_security_policy

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def tree_version(root: Path) -> str:
    """A hash of (path, size, mtime) of every run file under ``root``."""
    digest = hashlib.sha256()
    for path in watch_files(root):
        try:
            st = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


@dataclass
class ViewState:
    """The served page, rebuilt at most once per change of the run files."""

    root: Path
    title: str = DEFAULT_TITLE
    poll_ms: int = 2000
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _version: str = ""
    _page: bytes = b""

    def version(self) -> str:
        return tree_version(self.root)

    def page(self) -> bytes:
        with self._lock:
            version = self.version()
            if version != self._version or not self._page:
                inputs = discover_inputs(self.root)
                if not inputs.runs and not inputs.panels:
                    inputs.problems.append(
                        f"no run directories under {self.root} yet; this page refreshes "
                        "when they appear"
                    )
                html = build_html(
                    inputs, title=self.title, live=True, version=version, poll_ms=self.poll_ms
                )
                self._page, self._version = html.encode("utf-8"), version
            return self._page


def host_name(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8765`` -> ``::1``)."""
    header = header.strip()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def make_handler(state: ViewState, loopback: bool) -> type[BaseHTTPRequestHandler]:
    csp = content_security_policy(asset("report.js"), header=True)

    class Handler(BaseHTTPRequestHandler):
        server_version = "todeval-view"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the page polls every few seconds."""

        def _host_ok(self) -> bool:
            return not loopback or is_loopback(host_name(self.headers.get("Host") or ""))

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", csp)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            if not self._host_ok():
                self._send(421, b"misdirected request\n", "text/plain; charset=utf-8")
                return
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                self._send(200, state.page(), "text/html; charset=utf-8")
            elif path == "/version.json":
                body = json.dumps({"version": state.version()}).encode()
                self._send(200, body, "application/json")
            elif path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            else:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")

        def do_HEAD(self) -> None:
            self.do_GET()

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


def make_server(state: ViewState, host: str, port: int) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port`` 0 picks a free port."""
    cls = _Server6 if ":" in host else _Server
    return cls((host.strip("[]"), port), make_handler(state, is_loopback(host)))
