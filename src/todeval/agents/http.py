"""The keep-alive HTTP clients a run uses to reach endpoints it does not own (a system under
test behind HTTP, an agent's chat endpoint): one ``httpx.AsyncClient`` per event loop, made on
first use and closed with the run, so a recorded latency is a request's round trip, not a
client's set-up. ``httpx`` is imported when a client is first made (a run that reaches no such
endpoint never needs it: about a fifth of a second of start-up)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from typing import TYPE_CHECKING

from todeval.core.health import current_health
from todeval.core.redact import add_url_secrets, redact
from todeval.errors import InfrastructureError

if TYPE_CHECKING:
    import httpx


class HttpClients:
    """The keep-alive HTTP clients of a run's http systems: one per event loop (a client is
    bound to the loop it first ran on), made on first use and closed by :meth:`aclose`."""

    def __init__(self) -> None:
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
        self._clients = weakref.WeakKeyDictionary()

    def client(self) -> httpx.AsyncClient:
        import httpx  # only once a run reaches such an endpoint

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            # The timeout is set per request. No pool limit: the run's --max-concurrency bounds
            # the requests in flight, and a request queued for a free connection (httpx's
            # default: 100, of which 20 kept alive) would be timed as the system's latency.
            unbounded = httpx.Limits(max_connections=None, max_keepalive_connections=None)
            client = httpx.AsyncClient(trust_env=False, limits=unbounded)
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the current loop's client; those of other loops (ended) are dropped."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        self._clients.clear()
        if client is not None:
            import httpx  # imported already: the client exists

            with contextlib.suppress(httpx.HTTPError, OSError):  # a connection already gone
                await client.aclose()


async def post_json(
    clients: HttpClients,
    url: str,
    content: bytes,
    *,
    timeout_s: float,
    error: type[Exception],
    who: str = "",
    headers: dict[str, str] | None = None,
    scrub: str | None = None,
) -> tuple[str, float]:
    """POST a JSON body to an endpoint under test: its response text and the round trip's
    seconds (the client is already open). A timeout, a connection failure or a non-2xx status
    raises ``error`` with one line naming ``who`` and ``url``; an error body is redacted, and
    ``scrub`` (a value of ours the endpoint may echo) replaced, before it enters the message.

    Every call is reported to the run's health (:mod:`todeval.core.health`). An endpoint that
    cannot be reached and has not answered once in this run raises
    :class:`~todeval.errors.InfrastructureError` instead: the episode is not scored (it
    is re-run by the same command), and the runner stops after the first episodes with one line
    naming the URL and the cause -- a server that is not running is not a system's failure."""
    import httpx  # imported already by the client

    add_url_secrets(url)  # user:password@ or ?key=: never written, nor what a server echoes
    shown = redact(url)
    client = clients.client()
    started = time.perf_counter()
    try:
        response = await client.post(
            url,
            content=content,
            headers={"Content-Type": "application/json", **(headers or {})},
            timeout=timeout_s,
        )
    except httpx.TimeoutException:
        raise error(f"no answer from {who}{shown} within {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        cause = redact(f"cannot reach {who}{shown}: {type(exc).__name__}: {exc}")
        health = current_health()
        if health is not None and isinstance(exc, httpx.ConnectError):
            health.call_failed(url, connection=True, cause=cause)
            if health.endpoints[url].ok == 0:  # never answered in this run: nothing to score
                unreachable = InfrastructureError(cause)
                unreachable.origin = "agent channel"
                raise unreachable from None
        raise error(cause) from None
    health = current_health()
    if health is not None:
        health.call_ok(url)  # it answered (whatever the status): it is running
    latency = time.perf_counter() - started
    if not response.is_success:
        text = response.text.replace(scrub, "[episode token]") if scrub else response.text
        raise error(f"{who}{shown} answered HTTP {response.status_code}: {redact(text)[:200]}")
    return response.text, latency
