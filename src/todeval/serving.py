"""Small pages served on loopback (``todeval view``, ``todeval annotate serve``): the parts
every such server shares.

* :func:`is_loopback`, :func:`host_name` -- requests whose ``Host`` header does not name a
  loopback address are refused when bound to loopback (a guard against DNS rebinding);
* :class:`PageHandler` -- quiet logging, the Host check, and every response sent with
  ``no-store``, ``nosniff``, ``no-referrer`` and the page's Content-Security-Policy;
* :func:`bind` -- a threading server on IPv4 or IPv6 (``port`` 0 picks a free one);
* :func:`serve_until_interrupted` -- serve until Ctrl-C or SIGTERM, then close.
"""

from __future__ import annotations

import ipaddress
import signal
import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8765`` -> ``::1``)."""
    header = header.strip()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class PageHandler(BaseHTTPRequestHandler):
    """A request handler for one page and its API; subclasses set ``csp`` and ``loopback``."""

    sys_version = ""
    csp = "default-src 'none'"
    loopback = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: pages poll and save often."""

    def host_ok(self) -> bool:
        """False (and a 421 sent) for a non-loopback Host while bound to loopback."""
        if not self.loopback or is_loopback(host_name(self.headers.get("Host") or "")):
            return True
        self.send(421, b"misdirected request\n", "text/plain; charset=utf-8")
        return False

    def send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", self.csp)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


def bind(handler: type[PageHandler], host: str, port: int) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port`` 0 picks a free port."""
    cls = _Server6 if ":" in host else _Server
    return cls((host.strip("[]"), port), handler)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve_until_interrupted(
    server: ThreadingHTTPServer, on_close: Callable[[], None] | None = None
) -> None:
    """Serve until Ctrl-C or SIGTERM (also when started in the background, where SIGINT may be
    ignored), then close the server, call ``on_close`` and restore the signal handlers."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.server_close()
        if on_close is not None:
            on_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
