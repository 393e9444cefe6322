"""``openai`` backend: any OpenAI-compatible chat-completions endpoint.

The request body is built here and posted as JSON, not through the SDK's request machinery
(which deep-copies every request and re-walks it). A plain ``http://`` endpoint that no proxy
variable applies to (a local vLLM, llama.cpp or test server) is posted to with
:mod:`todeval.backends.http11`, which costs a tenth of the CPU of the SDK's ``httpx`` client
per call and needs no import of the SDK (about a second of start-up); any other (``https``, a
proxy, the SDK's default endpoint) goes through the SDK's own HTTP client, headers and base URL
(docs/backends.md, "Throughput"). The SDK's own retries are off: retries, backoff and
connection limits live in :mod:`todeval.backends.retry`. Each failure is
classified here: transient ones (connection, timeout, 429, 5xx, a malformed body) raise
:class:`TransientError`; a rejected key or an unknown model raises a one-line
:class:`todeval.errors.UsageError`; other 4xx give up at once. Server text (error bodies,
replies) is redacted of API keys as it arrives (:mod:`todeval.core.redact`).

Tools go out natively (``tools=``) or, with ``tool_mode="text"``, through the text protocol of
:mod:`todeval.backends.text_tools`. Schema-constrained output is requested per ``schema_mode``:
``json_schema`` (OpenAI, vLLM, llama.cpp server, ...), ``json_object`` with a ``schema`` field
(llama-cpp-python server), ``guided_json`` (vLLM's extra parameter) or ``none``.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, Field, ValidationError

from todeval import __version__
from todeval.backends.accounting import usage_or_estimate
from todeval.backends.errors import TransientError
from todeval.backends.http11 import HttpError, HttpPool, HttpTimeout, direct
from todeval.backends.text_tools import (
    limit_string_lengths,
    parse_tool_reply,
    to_text_messages,
    tool_call_schema,
)
from todeval.backends.types import (
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    ModelInfo,
    ToolCallOut,
)
from todeval.core import safejson
from todeval.core.redact import redact
from todeval.errors import EndpointRefusedError

# ---------------------------------------------------------------------------------------------
# The response body, parsed strictly (the SDK's lax parsing would let a broken body through)


class _Function(BaseModel):
    name: str
    arguments: str | None = None


class _ToolCall(BaseModel):
    id: str | None = None
    function: _Function


class _Message(BaseModel):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Completion(BaseModel):
    choices: list[_Choice]
    usage: Any = Field(None, description="the server's counts: checked by the accounting")


def parse_completion_body(body: str) -> _Completion:
    """The chat-completion body, or :class:`TransientError` ``malformed`` if it is not one."""
    try:  # parsed as models' outputs are: bounded depth, lone surrogates repaired
        completion = _Completion.model_validate(safejson.loads(body))
    except (ValueError, ValidationError) as exc:
        snippet = redact(body)[:80].replace("\n", " ")
        count = exc.error_count() if isinstance(exc, ValidationError) else 1
        raise TransientError(
            f"malformed response body ({count} error(s)): {snippet!r}",
            kind="malformed",
        ) from None
    if not completion.choices:
        raise TransientError("malformed response body: no choices", kind="malformed")
    return completion


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


# ---------------------------------------------------------------------------------------------
# Request building


def _native_message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id or ""
        out["content"] = message.content or ""
    elif out["content"] is None and not message.tool_calls:
        out["content"] = ""
    return out


def _schema_args(info: ModelInfo, schema: dict[str, Any]) -> dict[str, Any]:
    """Request fields asking the server for output matching ``schema``."""
    if info.schema_mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema},
            }
        }
    if info.schema_mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if info.schema_mode == "guided_json":
        return {"extra_body": {"guided_json": schema}}
    return {}


def build_request(info: ModelInfo, request: GenerationRequest) -> dict[str, Any]:
    """Keyword arguments for ``chat.completions.create`` (without the timeout)."""
    gen = {**info.generation, **request.extra}
    default_max = gen.pop("max_tokens", None)
    max_tokens = request.max_tokens if request.max_tokens is not None else default_max
    for key in ("temperature", "seed", "model", "messages", "tools", "tool_choice"):
        gen.pop(key, None)  # the request decides these
    max_string = gen.pop("max_string_length", None)
    tools = request.tools
    if tools and max_string is not None:
        tools = [limit_string_lengths(t, int(max_string)) for t in tools]
    kwargs: dict[str, Any] = {"model": info.model, "temperature": request.temperature}
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if request.seed is not None:
        kwargs["seed"] = request.seed
    schema = request.response_schema
    if info.tool_mode == "native":
        kwargs["messages"] = [_native_message(m) for m in request.messages]
        if tools:
            kwargs["tools"] = tools
            choice = request.tool_choice
            if choice is None and request.constrained:
                choice = "required"
            if choice is not None:
                kwargs["tool_choice"] = choice
    else:
        kwargs["messages"] = to_text_messages(request.messages, request.tools, request.tool_choice)
        forced = request.tool_choice not in (None, "auto", "none")
        wants_call = request.tool_choice != "none" and (request.constrained or forced)
        if request.tools and schema is None and wants_call:
            schema = tool_call_schema(request.tools, request.tool_choice)
    extra_body: dict[str, Any] = dict(gen)
    if schema is not None:
        if max_string is not None:
            schema = limit_string_lengths(schema, int(max_string))
        schema_args = _schema_args(info, schema)
        extra_body.update(schema_args.pop("extra_body", {}))
        kwargs.update(schema_args)
    if extra_body:
        kwargs["extra_body"] = extra_body
    return kwargs


# ---------------------------------------------------------------------------------------------
# Error classification


def _where(info: ModelInfo) -> str:
    return f"model {info.model!r} at {redact(info.base_url or '')}"  # no ?key= of its query


def _error_message(status: int, body: str) -> str:
    """What an error body says: its ``error.message`` (as the SDK reads it), else the body."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return body or f"HTTP {status}"


def _transport_error(exc: Exception, http: ModuleType, info: ModelInfo) -> Exception | None:
    """The error for a call the HTTP client could not complete (``None``: not such a failure).
    Its message is redacted before it is cut, so no key it echoed reaches a record or a line."""
    where = _where(info)
    if isinstance(exc, http.TimeoutException):
        return TransientError(f"timeout calling {where}", kind="timeout")
    if isinstance(exc, http.TransportError):
        return TransientError(
            redact(f"connection error calling {where}: {type(exc).__name__}: {exc}")[:300],
            kind="connection",
        )
    return None


def _status_error(status: int, headers: Any, body: str, info: ModelInfo) -> Exception:
    """The error for an answer with an HTTP error ``status``. Text from the server (the error
    body) is redacted before it is cut, so no key it echoed reaches a record or a line."""
    where = _where(info)
    retry_after = parse_retry_after(headers.get("retry-after"))
    message = redact(_error_message(status, body))[:200]
    if status == 429:
        return TransientError(
            f"rate limited (429) by {where}", kind="rate_limit", retry_after=retry_after
        )
    if status >= 500 or status in (408, 409):
        return TransientError(
            f"server error {status} from {where}: {message}",
            kind="server",
            retry_after=retry_after,
        )
    if status in (401, 403):
        variable = info.api_key_env or "(none configured)"
        return EndpointRefusedError(
            f"{where} refused the API key ({status}); check the variable {variable}"
        )
    if status == 404:
        return EndpointRefusedError(
            f"{where} answered 404 (unknown model or wrong base URL): {message}"
        )
    return TransientError(
        f"request rejected ({status}) by {where}: {message}", kind="client", retryable=False
    )


# ---------------------------------------------------------------------------------------------


def http_module(client: object) -> ModuleType:
    """The HTTP library (``httpx``, or ``httpx2`` for newer SDKs) the SDK's client is built on:
    its exception types classify failed calls."""
    for cls in type(client).__mro__:
        root = cls.__module__.split(".", 1)[0]
        if root.startswith("httpx"):
            return sys.modules[root]
    raise TypeError(f"{type(client).__name__} is not an httpx client")


POOL_SHARD = 16
"""Connections per HTTP client of the SDK: the client's pool looks at every connection it
holds for each request it sends, so 128 calls in flight go through 8 clients of 16 (each call
to the client with the fewest calls in flight), not one of 128."""


def shard_sizes(calls: int) -> list[int]:
    """The connections of each HTTP client keeping ``calls`` calls in flight: sizes that add up
    to ``calls``, none above :data:`POOL_SHARD`."""
    count = max(1, -(-calls // POOL_SHARD))
    return [calls // count + (1 if i < calls % count else 0) for i in range(count)]


def pool_limits(calls: int) -> Any | None:
    """The SDK's connection-pool limits widened to keep ``calls`` connections alive, or
    ``None`` when its defaults already do. Its default keeps 100 idle connections: with more
    calls in flight (``--max-concurrency 128``) every reply past the 100th closed its
    connection and the next call opened a new one."""
    import openai  # a second of imports: only for the SDK's transport

    default = getattr(getattr(openai, "_constants", None), "DEFAULT_CONNECTION_LIMITS", None)
    keep = getattr(default, "max_keepalive_connections", None)
    if default is None or not isinstance(keep, int) or calls <= keep:
        return None
    return type(default)(
        max_connections=max(calls, default.max_connections or 0),
        max_keepalive_connections=calls,
        keepalive_expiry=default.keepalive_expiry,
    )


def split_query(url: str | None) -> tuple[str | None, dict[str, str]]:
    """A base URL without its query, and the query's parameters. The SDK appends each path to
    the whole base URL (``.../v1/?api_key=Qchat/completions``), so a query -- a proxy's
    ``?api_key=`` -- goes with every request as the client's ``default_query`` instead."""
    if url is None or "?" not in url:
        return url, {}
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit(parts._replace(query="", fragment="")), query


class BodyEncoder:
    """A request's JSON body, byte for byte what ``json.dumps(payload)`` gives, with the
    tool definitions serialised once while they stay the same: a system sends the same tools
    with every call (7 KB of schemas for a tool-using system: about 60 us of CPU a call to
    re-serialise).

    The tools are written as a marker string (random per encoder, so no message can hold it)
    that is then replaced by their cached JSON; a cached entry is reused only when the
    request's tools equal a private copy of what was serialised."""

    KEEP = 8
    """Distinct tool sets remembered (a system with modules may send several)."""

    def __init__(self) -> None:
        self._marker = f"todeval-tools-{secrets.token_hex(8)}"
        self._cached: list[tuple[Any, str]] = []  # (private copy of the tools, their JSON)

    def encode(self, payload: dict[str, Any]) -> bytes:
        tools = payload.get("tools")
        if not tools:
            return json.dumps(payload).encode("ascii")  # \u-escaped: a lone surrogate too
        text = json.dumps({**payload, "tools": self._marker})
        return text.replace(f'"{self._marker}"', self._tools_json(tools), 1).encode("ascii")

    def _tools_json(self, tools: Any) -> str:
        for index, (known, text) in enumerate(self._cached):
            if known == tools:
                if index:  # most recent first
                    self._cached.insert(0, self._cached.pop(index))
                return text
        text = json.dumps(tools)
        self._cached.insert(0, (json.loads(text), text))  # a copy no caller can change
        del self._cached[self.KEEP :]
        return text


Answer = tuple[int, Mapping[str, str], str]
"""An HTTP answer: its status, its headers (looked up by lower-case name) and its body."""


class _DirectTransport:
    """Posts to a plain ``http://`` endpoint with :mod:`todeval.backends.http11` (no SDK)."""

    def __init__(self, info: ModelInfo, base_url: str, query: dict[str, str], api_key: str):
        self._info = info
        self._pool = HttpPool(base_url, keep=info.connection_limit)
        url = base_url.rstrip("/") + "/chat/completions"
        if query:
            url = f"{url}?{urlencode(query)}"
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"todeval/{__version__}",
        }
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._head = self._pool.head(self._pool.target(url), headers)

    async def post(self, content: bytes) -> Answer:
        try:
            answer = await self._pool.post(self._head, content, timeout_s=self._info.timeout_s)
        except HttpTimeout:
            raise TransientError(f"timeout calling {_where(self._info)}", kind="timeout") from None
        except HttpError as exc:
            message = f"connection error calling {_where(self._info)}: {exc}"
            raise TransientError(redact(message)[:300], kind="connection") from None
        return answer.status, answer.headers, answer.text

    async def aclose(self) -> None:
        await self._pool.aclose()


class _SdkTransport:
    """Posts with the SDK's own HTTP client, headers and base URL (https, a proxy, the SDK's
    default endpoint): the calls in flight spread over clients of at most :data:`POOL_SHARD`
    connections each, each keeping its share alive."""

    def __init__(
        self, info: ModelInfo, base_url: str | None, query: dict[str, str], api_key: str
    ) -> None:
        import openai  # a second of imports: only for this transport

        self._info = info
        self._shards = [
            openai.DefaultAsyncHttpxClient()
            if (limits := pool_limits(size)) is None
            else openai.DefaultAsyncHttpxClient(limits=limits)
            for size in shard_sizes(info.connection_limit)
        ]
        self._in_flight = [0] * len(self._shards)
        self._errors = http_module(self._shards[0])
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            default_query=query or None,
            max_retries=0,
            timeout=info.timeout_s,
            http_client=self._shards[0],
        )
        # what the SDK would send with every request: its headers, the key, the query
        headers = {k: v for k, v in self._client.default_headers.items() if isinstance(v, str)}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._headers = headers
        self._query = query
        self._url = str(self._client.base_url).rstrip("/") + "/chat/completions"

    async def post(self, content: bytes) -> Answer:
        shard = self._in_flight.index(min(self._in_flight))
        self._in_flight[shard] += 1
        try:
            raw = await self._shards[shard].post(
                self._url,
                content=content,
                headers=self._headers,
                params=self._query or None,
                timeout=self._info.timeout_s,
            )
            return raw.status_code, raw.headers, raw.text
        except Exception as exc:
            error = _transport_error(exc, self._errors, self._info)
            if error is None:
                raise
            raise error from None
        finally:
            self._in_flight[shard] -= 1

    async def aclose(self) -> None:
        await self._client.close()  # closes the first client
        for client in self._shards[1:]:
            await client.aclose()


class OpenAIBackend:
    """Chat completions on an OpenAI-compatible server: a plain ``http://`` endpoint through
    :mod:`todeval.backends.http11`, any other (https, a proxy from the environment, the SDK's
    default endpoint) through ``openai.AsyncOpenAI``'s HTTP client."""

    def __init__(self, info: ModelInfo, *, api_key: str) -> None:
        self._info = info
        base_url, query = split_query(info.base_url)
        self._transport: _DirectTransport | _SdkTransport = (
            _DirectTransport(info, base_url, query, api_key)
            if base_url is not None and direct(base_url)
            else _SdkTransport(info, base_url, query, api_key)
        )
        self._body = BodyEncoder()

    @property
    def info(self) -> ModelInfo:
        return self._info

    def __repr__(self) -> str:
        return f"OpenAIBackend({self._info.spec!r})"

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        kwargs = build_request(self._info, request)
        # The JSON body posted as built: the SDK's ``chat.completions.create`` re-walks every
        # message and tool schema through its TypedDict transform, which cost ~7 ms per call
        # of a 26-message, 7-tool request (most of our overhead).
        payload = {k: v for k, v in kwargs.items() if k != "extra_body"}
        payload.update(kwargs.get("extra_body", {}))
        content = self._body.encode(payload)
        started = time.perf_counter()
        status, headers, body = await self._transport.post(content)
        if status >= 400:
            raise _status_error(status, headers, body, self._info)
        latency = time.perf_counter() - started
        completion = parse_completion_body(body)
        choice = completion.choices[0]
        text = redact(choice.message.content or "")  # a reply may echo the key too
        if choice.message.tool_calls:
            calls = [
                ToolCallOut(
                    id=c.id or f"call_{i}",
                    name=redact(c.function.name),
                    arguments=redact(c.function.arguments or ""),
                )
                for i, c in enumerate(choice.message.tool_calls)
            ]
        elif request.tools and self._info.tool_mode == "text" and request.tool_choice != "none":
            calls = parse_tool_reply(text)
        else:
            calls = []
        usage = completion.usage if isinstance(completion.usage, dict) else {}
        return GenerationResult(
            text=text,
            tool_calls=calls,
            finish_reason=choice.finish_reason or "stop",
            usage=usage_or_estimate(
                self._info,
                role=role,
                request=request,
                reply_text=text + "".join(c.arguments for c in calls),
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                latency_s=latency,
            ),
        ).capped()  # a reply too long to be an answer is cut and marked "length"

    async def aclose(self) -> None:
        await self._transport.aclose()
