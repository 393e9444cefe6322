"""The chat endpoint of an external agent: one request per turn, in one of three shapes.

``openai-chat``
    ``POST URL`` with an OpenAI chat-completions body: ``{"model", "messages", "user",
    "metadata"}``; ``messages`` is the whole visible dialogue so far (the endpoint may be
    stateless), ``user`` the conversation id. The reply is ``choices[0].message.content``; its
    ``usage`` (``prompt_tokens``, ``completion_tokens``) is recorded when present.
``rasa-rest``
    Rasa's REST channel: ``POST URL`` with ``{"sender", "message", "metadata"}``; the reply is
    the list of bot messages, whose ``text`` parts are joined by newlines. Rasa reports no
    token usage.
``plain``
    ``POST URL`` with ``{"conversation_id", "message", "mcp"}``; the reply is ``{"reply":
    text}``, optionally with ``"usage"`` as for ``openai-chat``.

Every request also names the conversation, and, when the benchmark serves tools, the MCP
server's URL and the episode token the agent must send with its tool calls (see
:class:`Handoff`), in headers (``X-Todeval-Conversation``, ``X-Todeval-Mcp-Url``,
``X-Todeval-Episode-Token``) and in the body (``metadata`` or ``mcp``).

The endpoint *is* the system under test: connection failures, timeouts, non-2xx statuses and
bodies that do not have the channel's shape raise :class:`AgentEndpointError` (the episode is
the agent's error, never an infrastructure error re-run on resume). Nothing is retried: a
request changes the agent's conversation state. Token counts the endpoint does not report are
recorded as *unknown* (``CallUsage.tokens_unknown``), never estimated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from todeval.agents.http import HttpClients, post_json
from todeval.backends.accounting import valid_token_count
from todeval.core import safejson
from todeval.core.records import CallUsage
from todeval.errors import UsageError, choice_error

Channel = Literal["openai-chat", "rasa-rest", "plain"]
CHANNELS: tuple[Channel, ...] = ("openai-chat", "rasa-rest", "plain")
DEFAULT_TIMEOUT_S = 300.0
"""An agent's turn may hold several model and tool calls: a generous default."""


class AgentEndpointError(Exception):
    """The agent's endpoint failed (unreachable, timed out, an error status, a broken body)."""


class Handoff(BaseModel):
    """What the agent is told with every request of a conversation."""

    conversation_id: str
    mcp_url: str | None = None
    episode_token: str | None = None

    def headers(self) -> dict[str, str]:
        out = {"X-Todeval-Conversation": self.conversation_id}
        if self.mcp_url and self.episode_token:
            out["X-Todeval-Mcp-Url"] = self.mcp_url
            out["X-Todeval-Episode-Token"] = self.episode_token
        return out

    def metadata(self) -> dict[str, str]:
        out = {"todeval_conversation_id": self.conversation_id}
        if self.mcp_url and self.episode_token:
            out["todeval_mcp_url"] = self.mcp_url
            out["todeval_episode_token"] = self.episode_token
        return out


class ChatTurn(BaseModel):
    """One visible message of the dialogue, from the agent's point of view."""

    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class AgentReply:
    text: str
    usage: CallUsage


def check_channel(channel: str) -> Channel:
    for known in CHANNELS:
        if channel == known:
            return known
    raise choice_error("channel", channel, list(CHANNELS))


def check_url(url: str | None, flag: str) -> str:
    if not url:
        raise UsageError(f"an agent needs its chat endpoint: pass {flag} URL")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{flag} needs an http(s) URL, got {url!r}")
    return url


def _body(channel: Channel, model: str, history: list[ChatTurn], handoff: Handoff) -> Any:
    last = history[-1].content if history else ""
    if channel == "openai-chat":
        return {
            "model": model,
            "messages": [t.model_dump() for t in history],
            "user": handoff.conversation_id,
            "metadata": handoff.metadata(),
        }
    if channel == "rasa-rest":
        return {"sender": handoff.conversation_id, "message": last, "metadata": handoff.metadata()}
    mcp = (
        {"url": handoff.mcp_url, "token": handoff.episode_token}
        if handoff.mcp_url and handoff.episode_token
        else None
    )
    return {"conversation_id": handoff.conversation_id, "message": last, "mcp": mcp}


def _shape_error(url: str, what: str) -> AgentEndpointError:
    return AgentEndpointError(f"{url} answered {what}")


def _reply(channel: Channel, url: str, data: Any) -> tuple[str, dict[str, Any] | None, str]:
    """(text, usage or None, model name) of a parsed body; AgentEndpointError if misshapen."""
    if channel == "rasa-rest":
        if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
            raise _shape_error(url, "a body that is not a list of Rasa bot messages")
        texts = [m["text"] for m in data if isinstance(m.get("text"), str)]
        return "\n".join(texts), None, ""
    if not isinstance(data, dict):
        raise _shape_error(url, "a body that is not a JSON object")
    found_usage, found_model = data.get("usage"), data.get("model")
    usage = found_usage if isinstance(found_usage, dict) else None
    model = found_model if isinstance(found_model, str) else ""
    if channel == "plain":
        reply = data.get("reply")
        if not isinstance(reply, str):
            raise _shape_error(url, 'a body without a "reply" string')
        return reply, usage, model
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else 0
    if content is not None and not isinstance(content, str):
        raise _shape_error(url, "a body that is not a chat completion")
    return content or "", usage, model


def _usage(role: str, model: str, usage: dict[str, Any] | None, latency_s: float) -> CallUsage:
    prompt = usage.get("prompt_tokens") if usage else None
    completion = usage.get("completion_tokens") if usage else None
    known = valid_token_count(prompt) and valid_token_count(completion)
    return CallUsage(
        role=role,
        model=model[:200] or "agent",
        prompt_tokens=prompt if known else 0,
        completion_tokens=completion if known else 0,
        tokens_unknown=not known,
        latency_s=latency_s,
    )


class AgentEndpoint:
    """An agent's chat endpoint for one role of a run (shared by the run's episodes)."""

    def __init__(
        self,
        url: str,
        channel: str = "openai-chat",
        *,
        role: str = "system",
        model: str = "agent",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clients: HttpClients | None = None,
    ) -> None:
        self.url = check_url(url, "--system-url" if role == "system" else f"--{role}-url")
        self.channel = check_channel(channel)
        self.role = role
        self.model = model
        self.timeout_s = timeout_s
        self.clients = clients or HttpClients()

    async def send(self, history: list[ChatTurn], handoff: Handoff) -> AgentReply:
        """One turn: the agent's reply to the last message of ``history``, with its accounting
        (wall time of the request, token usage when the endpoint reports it)."""
        content = json.dumps(_body(self.channel, self.model, history, handoff)).encode("utf-8")
        # An error body may echo the request (a framework's validation error does): the episode
        # token must not reach the record through it.
        body, latency = await post_json(
            self.clients, self.url, content, timeout_s=self.timeout_s, error=AgentEndpointError,
            who="the agent at ", headers=handoff.headers(), scrub=handoff.episode_token,
        )  # fmt: skip
        try:
            data = safejson.loads(body)
        except (json.JSONDecodeError, safejson.JsonDepthError):
            raise _shape_error(self.url, "a body that is not JSON") from None
        text, usage, model = _reply(self.channel, self.url, data)
        return AgentReply(text=text, usage=_usage(self.role, model, usage, latency))
