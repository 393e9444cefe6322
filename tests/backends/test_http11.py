"""The small HTTP/1.1 client of the openai backend against a real server on 127.0.0.1 that
answers each request with canned bytes: the ways an answer's body can be framed, kept-alive
connections reused, broken answers failing as :class:`HttpError`, and when the backend uses
the client at all."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from todeval.backends.http11 import HttpError, HttpPool, HttpTimeout, direct


class Closing(bytes):
    """An answer after which the server closes the connection."""


Answer = Callable[[bytes], bytes | None]
"""request body -> the raw bytes to answer (None: close without answering; :class:`Closing`:
close after answering)"""


@asynccontextmanager
async def canned_server(answer: Answer) -> AsyncIterator[tuple[str, list[int]]]:
    """A server answering each request on a connection with ``answer(body)``; yields its URL
    and the number of requests each connection carried (in the order they opened)."""
    per_connection: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        index = len(per_connection)
        per_connection.append(0)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                per_connection[index] += 1
                reply = answer(body)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if isinstance(reply, Closing):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client left, or the test ended
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", per_connection
    finally:
        server.close()


async def _post(url: str, body: bytes = b"{}", *, timeout_s: float = 5.0) -> tuple[int, str]:
    pool = HttpPool(url, keep=4)
    head = pool.head(pool.target(url + "/chat/completions"), {"Content-Type": "application/json"})
    try:
        response = await pool.post(head, body, timeout_s=timeout_s)
    finally:
        await pool.aclose()
    return response.status, response.text


GZIPPED = gzip.compress(b"hello world")


def _answer(head: str, body: bytes) -> bytes:
    return head.replace("\n", "\r\n").encode() + b"\r\n\r\n" + body


@pytest.mark.parametrize(
    "raw",
    [
        _answer("HTTP/1.1 200 OK\nContent-Length: 11", b"hello world"),
        _answer(
            "HTTP/1.1 200 OK\nTransfer-Encoding: chunked",
            b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
        ),
        _answer("HTTP/1.1 100 Continue", b"")
        + _answer("HTTP/1.1 200 OK\nContent-Length: 11", b"hello world"),
        _answer(
            f"HTTP/1.1 200 OK\nContent-Encoding: gzip\nContent-Length: {len(GZIPPED)}", GZIPPED
        ),
        Closing(_answer("HTTP/1.0 200 OK", b"hello world")),  # read to the close
    ],
    ids=["length", "chunked", "interim", "gzip", "to-close"],
)
def test_each_body_framing_is_read_whole(raw: bytes) -> None:
    async def run() -> tuple[int, str]:
        once = [raw]

        def answer(_: bytes) -> bytes | None:
            return once.pop() if once else None

        async with canned_server(answer) as (url, _):
            return await _post(url)

    assert asyncio.run(run()) == (200, "hello world")


def test_kept_alive_connections_are_reused() -> None:
    async def run() -> list[int]:
        def answer(body: bytes) -> bytes:
            return _answer(f"HTTP/1.1 200 OK\nContent-Length: {len(body)}", body)

        async with canned_server(answer) as (url, per_connection):
            pool = HttpPool(url, keep=8)
            head = pool.head(pool.target(url + "/c"), {})
            for wave in range(3):
                replies = await asyncio.gather(
                    *(pool.post(head, b"%d-%d" % (wave, i), timeout_s=5) for i in range(4))
                )
                assert [r.body for r in replies] == [b"%d-%d" % (wave, i) for i in range(4)]
            await pool.aclose()
            return per_connection

    per_connection = asyncio.run(run())
    assert len(per_connection) == 4 and sum(per_connection) == 12


def test_connection_close_is_not_reused() -> None:
    async def run() -> list[int]:
        def answer(_: bytes) -> bytes:
            return _answer("HTTP/1.1 200 OK\nConnection: close\nContent-Length: 2", b"ok")

        async with canned_server(answer) as (url, per_connection):
            pool = HttpPool(url, keep=8)
            head = pool.head(pool.target(url), {})
            for _ in range(3):
                assert (await pool.post(head, b"x", timeout_s=5)).body == b"ok"
            await pool.aclose()
            return per_connection

    assert asyncio.run(run()) == [1, 1, 1]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "closed the connection without answering"),
        (
            Closing(_answer("HTTP/1.1 200 OK\nContent-Length: 50", b"short")),
            "before the whole answer",
        ),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x answer"),
        (_answer("HTTP/1.1 200 OK\nContent-Length: x", b""), "malformed Content-Length"),
        (_answer("HTTP/1.1 200 OK\nContent-Encoding: br\nContent-Length: 2", b"ok"), "encoding"),
    ],
    ids=["closed", "truncated", "not-http", "bad-length", "encoding"],
)
def test_broken_answers_fail(raw: bytes | None, message: str) -> None:
    async def run() -> None:
        async with canned_server(lambda _: raw) as (url, _):
            await _post(url)

    with pytest.raises(HttpError, match=message):
        asyncio.run(run())


def test_a_silent_server_times_out() -> None:
    async def run() -> None:
        hold = asyncio.Event()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await hold.wait()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            await _post(f"http://127.0.0.1:{port}/v1", timeout_s=0.2)
        finally:
            hold.set()
            server.close()

    with pytest.raises(HttpTimeout):
        asyncio.run(run())


def test_only_plain_http_without_a_proxy_goes_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert direct("http://127.0.0.1:8000/v1")
    assert not direct("https://api.example.com/v1")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    assert not direct("http://10.0.0.5:8000/v1")
    monkeypatch.setenv("NO_PROXY", "10.0.0.5")
    assert direct("http://10.0.0.5:8000/v1")


def test_a_header_with_a_line_break_is_refused() -> None:
    pool = HttpPool("http://127.0.0.1:9/v1", keep=1)
    with pytest.raises(ValueError, match="line break"):
        pool.head("/v1/x", {"Authorization": "Bearer k\r\nX-Evil: 1"})
