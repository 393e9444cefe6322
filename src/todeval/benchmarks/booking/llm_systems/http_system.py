"""``http``: a dialogue system behind an HTTP endpoint speaking the game master's protocol.

Each observation is one ``POST <url>`` with a JSON body::

    {"session_id": "...", "observation": {"kind": "user_message", "text": "..."},
     "tools": [...], "task_set": "test"}          # tools and task_set on the first call only

and the endpoint answers ``200`` with one action, ``{"action": {"name": <tool>, "arguments":
{...}}}``, or with text, ``{"text": "..."}`` (a format violation, as for any system). An optional
``"usage": {"prompt_tokens": n, "completion_tokens": m, "model": "..."}`` is recorded under the
role ``system``; without it the call is recorded with its latency and zero tokens.

A body that is not such JSON is the system's bad output: it is passed on as text and recorded
as a format violation. Connection failures, timeouts and non-2xx statuses raise
:class:`SystemEndpointError`: the endpoint *is* the system under test, so the episode is a
``system_error`` -- a failure in every metric, never re-run on resume. Nothing is retried: a
POST changes the remote session's state. See ``docs/llm-systems.md`` and
``examples/http_system_server.py``.

Connections are reused: every http system of a run posts through one keep-alive client
(:class:`HttpClients`, one ``httpx.AsyncClient`` per event loop, closed when the run ends), so
the recorded latency is the request's round trip, not a client's set-up (TLS context, pool,
TCP handshake) on every call.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from todeval.agents.http import HttpClients, post_json
from todeval.agents.hub import new_conversation_id
from todeval.backends.accounting import valid_token_count
from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
)
from todeval.core import safejson
from todeval.core.records import CallUsage
from todeval.dialogue.participants import PlayerOptions
from todeval.errors import UsageError

DEFAULT_TIMEOUT_S = 60.0
_MAX_RAW = 2000


class SystemEndpointError(Exception):
    """The system's endpoint failed (unreachable, timed out, or answered an error status)."""


class _Action(BaseModel):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class _Usage(BaseModel):
    prompt_tokens: Any = 0
    completion_tokens: Any = 0
    model: str = ""


class _Reply(BaseModel):
    action: _Action | None = None
    text: str | None = None
    usage: _Usage | None = None


def output_from_body(body: str, latency_s: float) -> SystemOutput:
    """The system output for a response body (malformed bodies become text)."""
    try:
        reply = _Reply.model_validate(safejson.loads(body))
    except (json.JSONDecodeError, ValidationError):
        return SystemOutput(text=body[:_MAX_RAW], usage=[_usage(None, latency_s)])
    usage = [_usage(reply.usage, latency_s)]
    if reply.action is not None:
        call = ToolCall(name=reply.action.name, arguments=reply.action.arguments)
        return SystemOutput(tool_call=call, text=reply.text, usage=usage)
    return SystemOutput(text=reply.text or "", usage=usage)


def _usage(reported: _Usage | None, latency_s: float) -> CallUsage:
    """The system's own counts; invalid ones (negative, fractional, absurd) count as 0 and the
    call is marked ``estimated``."""
    reported = reported or _Usage()
    valid = valid_token_count(reported.prompt_tokens) and valid_token_count(
        reported.completion_tokens
    )
    return CallUsage(
        role="system",
        model=reported.model or "http",
        prompt_tokens=reported.prompt_tokens if valid else 0,
        completion_tokens=reported.completion_tokens if valid else 0,
        estimated=not valid,
        latency_s=latency_s,
    )


_SHARED = HttpClients()
"""The clients of http systems built without a run's pool (direct use, tests)."""


class HttpSystem:
    """Forwards every observation to an HTTP endpoint and returns its action."""

    def __init__(
        self,
        *,
        url: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clients: HttpClients | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"the http system needs an http(s) URL, got {url!r}")
        self.url = url
        self.timeout_s = timeout_s
        self.clients = clients or _SHARED
        self.session_id = ""
        self.first = True
        self.tools: list[dict[str, Any]] = []
        self.task_set = ""

    @classmethod
    def from_options(cls, options: PlayerOptions) -> HttpSystem:
        url = options.extra.get("url")
        if not url:
            raise UsageError("the http system needs its endpoint: pass --system-url URL")
        timeout = float(options.extra.get("timeout_s", DEFAULT_TIMEOUT_S))
        clients = options.extra.get("http_clients")
        return cls(
            url=str(url),
            timeout_s=timeout,
            clients=clients if isinstance(clients, HttpClients) else None,
        )

    async def start(self, context: SystemContext) -> None:
        # A session id only names the remote session; it never changes what is played.
        self.session_id = new_conversation_id(context.seed)
        self.first = True
        self.tools = context.tools
        self.task_set = context.task_set

    def payload(self, observation: Observation) -> dict[str, Any]:
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "observation": observation.model_dump(mode="json"),
        }
        if self.first:
            body["tools"] = self.tools
            body["task_set"] = self.task_set
        return body

    async def respond(self, observation: Observation) -> SystemOutput:
        content = json.dumps(self.payload(observation)).encode("utf-8")
        body, latency = await post_json(
            self.clients, self.url, content, timeout_s=self.timeout_s, error=SystemEndpointError
        )
        self.first = False
        return output_from_body(body, latency)
