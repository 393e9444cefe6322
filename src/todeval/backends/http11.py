"""A small HTTP/1.1 client on asyncio for posting JSON to a plain ``http://`` endpoint.

At 100+ calls in flight the general-purpose client stack (request and response models,
header normalisation, a connection pool that scans every connection per request, anyio
wrappers) cost about as much CPU per call as the whole episode around the call, all of it on
the run's one event loop. This client does only what a chat-completion call needs: one write
per request (head and body together), a response parsed as it arrives (``Content-Length``,
chunked, or read to the close; ``gzip``/``deflate`` bodies inflated), kept-alive connections
reused last-in first-out, a deadline per exchange. It knows nothing of proxies or TLS: the
caller uses it only for ``http://`` URLs that no proxy variable applies to (:func:`direct`).

Failures raise :class:`HttpError` (the connection failed, closed early, or answered
something that is not HTTP/1.x) or its subclass :class:`HttpTimeout`; a connection that saw
either is closed, never reused.
"""

from __future__ import annotations

import asyncio
import urllib.request
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
"""Bytes a response's status line and headers may take."""

IDLE_EXPIRY_S = 4.0
"""An idle connection older than this is closed instead of reused (servers commonly close
theirs after 5 s: reusing one just then would lose the request)."""


class HttpError(Exception):
    """The exchange failed: no connection, a connection lost or reset, a broken answer."""


class HttpTimeout(HttpError):
    """No complete answer within the exchange's deadline."""


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: dict[str, str]
    """lower-cased names; repeated headers joined with ``, ``"""
    body: bytes

    @property
    def text(self) -> str:
        """The body decoded with the charset the content type names (else UTF-8); bytes that
        do not decode are replaced."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


def direct(url: str) -> bool:
    """True when ``url`` is plain ``http://`` and no proxy variable of the environment applies
    to it (``NO_PROXY`` taken into account): the cases this client serves."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    proxies = urllib.request.getproxies_environment()
    if not any(k in proxies for k in ("http", "all")):
        return True
    bypass = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 -- not in the stubs
    return bool(bypass(parts.hostname, proxies))


class _Connection(asyncio.Protocol):
    """One kept-alive connection: parses the answer to the request in progress as it arrives
    and completes the request's future with it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._buffer = bytearray()
        self._waiter: asyncio.Future[HttpResponse] | None = None
        self._status = 0
        self._headers: dict[str, str] | None = None
        self._length: int | None = None  # None: chunked or to the close
        self._chunked = False
        self._chunks: list[bytes] = []
        self._keep = True

    # asyncio callbacks ------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._waiter is None:  # bytes nobody asked for: the connection is not reusable
            self._keep = False
            return
        try:
            self._parse()
        except HttpError as exc:
            self._fail(exc)

    def eof_received(self) -> bool:
        self._ended(None)
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._ended(exc)

    # -------------------------------------------------------------------------------------
    def open(self) -> bool:
        """Still usable for another request."""
        return (
            not self.closed
            and self._keep
            and not self._buffer
            and self.transport is not None
            and not self.transport.is_closing()
        )

    def send(self, data: bytes, waiter: asyncio.Future[HttpResponse]) -> None:
        assert self.transport is not None
        self._waiter = waiter
        self._status, self._headers, self._length = 0, None, None
        self._chunked, self._chunks = False, []
        self.transport.write(data)

    def close(self) -> None:
        self.closed = True
        self._waiter = None
        if self.transport is not None:
            self.transport.abort()

    def _ended(self, exc: Exception | None) -> None:
        """The server closed (``exc`` None) or the connection broke."""
        self.closed = True
        if self._waiter is None or self._waiter.done():
            return
        if exc is None and self._headers is not None and self._length is None and not self._chunked:
            self._keep = False  # a body read to the close: complete now
            self._complete(bytes(self._buffer))
            return
        if exc is not None:
            self._fail(HttpError(f"{type(exc).__name__}: {exc}"))
        elif self._headers is None and not self._buffer:
            self._fail(HttpError("the server closed the connection without answering"))
        else:
            self._fail(HttpError("the server closed the connection before the whole answer"))

    def _fail(self, exc: HttpError) -> None:
        waiter, self._waiter = self._waiter, None
        self._keep = False
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        if self.transport is not None:
            self.transport.abort()

    def _complete(self, body: bytes) -> None:
        headers = self._headers or {}
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            try:
                body = zlib.decompress(body, 47)  # gzip or zlib header, detected
            except zlib.error as exc:
                self._fail(HttpError(f"undecodable {encoding} body: {exc}"))
                return
        elif encoding not in ("", "identity"):
            self._fail(HttpError(f"unsupported content encoding {encoding!r}"))
            return
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(HttpResponse(self._status, headers, body))

    def _parse(self) -> None:
        buffer = self._buffer
        while self._headers is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise HttpError("response headers too large")
                return
            self._head(bytes(buffer[:end]).decode("latin-1"))
            del buffer[: end + 4]
        if self._chunked:
            self._parse_chunks()
        elif self._length is not None and len(buffer) >= self._length:
            if len(buffer) > self._length:
                self._keep = False  # more than the answer: not a connection to reuse
            body = bytes(buffer[: self._length])
            del buffer[:]
            self._complete(body)

    def _head(self, head: str) -> None:
        lines = head.split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise HttpError(f"not an HTTP/1.x answer: {lines[0][:60]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise HttpError(f"malformed header line: {line[:60]!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if 100 <= status < 200:
            return  # an interim answer (100 Continue): the real one follows
        connection = headers.get("connection", "").lower()
        if version == "HTTP/1.0" or "close" in connection:
            self._keep = False
        self._status, self._headers = status, headers
        if status in (204, 304):
            self._length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in headers:
            try:
                self._length = int(headers["content-length"].split(",")[0])
            except ValueError:
                raise HttpError("malformed Content-Length") from None
            if self._length < 0:
                raise HttpError("malformed Content-Length")
        else:
            self._keep = False  # the body runs to the close

    def _parse_chunks(self) -> None:
        buffer = self._buffer
        while True:
            end = buffer.find(b"\r\n")
            if end < 0:
                return
            if self._length == -1:  # the trailer section after the last chunk
                del buffer[: end + 2]
                if end == 0:
                    self._complete(b"".join(self._chunks))
                    return
                continue
            try:
                size = int(bytes(buffer[:end]).split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise HttpError("malformed chunk size") from None
            if size == 0:
                del buffer[: end + 2]
                self._length = -1
                continue
            if len(buffer) < end + 2 + size + 2:
                return
            self._chunks.append(bytes(buffer[end + 2 : end + 2 + size]))
            del buffer[: end + 2 + size + 2]


def _check_header(name: str, value: str) -> None:
    if any(c in name + value for c in "\r\n\0") or not name:
        raise ValueError(f"HTTP header {name!r} has a line break or is empty")


class HttpPool:
    """Kept-alive connections to one ``http://host:port``; :meth:`post` sends one request.

    No cap on connections: the caller limits the calls in flight. Idle connections are kept
    (at most ``keep``) and reused last-in first-out."""

    def __init__(self, url: str, *, keep: int) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {url!r}")
        self._host = parts.hostname
        self._port = parts.port or 80
        self._authority = parts.netloc.rpartition("@")[2]
        self._keep = max(1, keep)
        self._idle: list[_Connection] = []

    def target(self, url: str) -> str:
        """The request target (path and query) of ``url``, an address on this pool's host."""
        parts = urlsplit(url)
        path = parts.path or "/"
        return f"{path}?{parts.query}" if parts.query else path

    def head(self, target: str, headers: Mapping[str, str]) -> bytes:
        """The fixed part of a POST's head to ``target`` (its length still to come)."""
        lines = [f"POST {target} HTTP/1.1", f"Host: {self._authority}"]
        for name, value in headers.items():
            _check_header(name, value)
            lines.append(f"{name}: {value}")
        return ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1")

    async def post(self, head: bytes, body: bytes, *, timeout_s: float) -> HttpResponse:
        """Send ``head`` (from :meth:`head`) with ``body``; the whole answer within
        ``timeout_s`` or :class:`HttpTimeout`."""
        data = b"%s%d\r\n\r\n%s" % (head, len(body), body)
        loop = asyncio.get_running_loop()
        connection: _Connection | None = None
        try:
            async with asyncio.timeout(timeout_s):
                connection = self._take(loop.time())
                if connection is None:
                    connection = await self._connect(loop)
                waiter: asyncio.Future[HttpResponse] = loop.create_future()
                connection.send(data, waiter)
                response = await waiter
        except TimeoutError:
            if connection is not None:
                connection.close()
            raise HttpTimeout(f"no complete answer within {timeout_s:g} s") from None
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        self._give_back(connection, loop.time())
        return response

    def _take(self, now: float) -> _Connection | None:
        while self._idle:
            connection = self._idle.pop()
            if connection.open() and now - connection.idle_since < IDLE_EXPIRY_S:
                return connection
            connection.close()
        return None

    def _give_back(self, connection: _Connection, now: float) -> None:
        if not connection.open() or len(self._idle) >= self._keep:
            connection.close()
            return
        connection.idle_since = now
        self._idle.append(connection)

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        try:
            _, connection = await loop.create_connection(_Connection, self._host, self._port)
        except OSError as exc:
            raise HttpError(f"{type(exc).__name__}: {exc}") from None
        return connection

    async def aclose(self) -> None:
        """Close the idle connections."""
        while self._idle:
            self._idle.pop().close()
        await asyncio.sleep(0)  # let the transports finish closing
