"""The openai backend against the real test server process, through the real openai SDK."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from tests.backends.backend_helpers import FOLLOWUP_TOOL, LOOKUP_TOOL, FakeClock, user_request
from todeval.backends import (
    Backend,
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    InfrastructureError,
    LimiterPool,
    ModelEntry,
    RetryPolicy,
    Script,
    ToolCallOut,
    make_backend,
)
from todeval.errors import UsageError
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

TOOL_REPLY = {"tool_calls": [{"name": "followup", "arguments": {"message": "Which day?"}}]}


def _script(**data: Any) -> Script:
    return Script.model_validate(data)


def _call(backend: Backend, request: GenerationRequest | None = None) -> GenerationResult:
    async def run() -> GenerationResult:
        try:
            return await backend.generate(request or user_request(), role="system")
        finally:
            await backend.aclose()

    return asyncio.run(run())


def _last_body(server: ServerProcess) -> dict[str, Any]:
    body: dict[str, Any] = server.requests()[-1]["body"]
    return body


def test_plain_text_with_server_usage() -> None:
    script = _script(
        replies=[{"text": "Hello!", "usage": {"prompt_tokens": 12, "completion_tokens": 3}}]
    )
    with ServerProcess(ServerConfig(script=script)) as server:
        result = _call(make_backend(f"openai:tiny@{server.base_url}"), user_request(seed=7))
        body = _last_body(server)
    assert result.text == "Hello!"
    assert result.tool_calls == []
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (12, 3)
    assert not result.usage.estimated and not result.usage.cached
    assert result.usage.latency_s > 0
    assert body["model"] == "tiny" and body["seed"] == 7 and body["temperature"] == 0.0


def test_missing_usage_is_estimated() -> None:
    script = _script(replies=[{"text": "abcdefgh", "omit_usage": True}])
    with ServerProcess(ServerConfig(script=script)) as server:
        result = _call(make_backend(f"openai:tiny@{server.base_url}"))
    assert result.usage.estimated
    assert result.usage.completion_tokens == 2


def test_native_tool_calls_round_trip() -> None:
    script = _script(replies=[TOOL_REPLY, "second"])
    history = [
        ChatMessage(role="system", content="You are a booking system."),
        ChatMessage(role="user", content="Book a table"),
    ]
    with ServerProcess(ServerConfig(script=script)) as server:
        first = _call(
            make_backend(f"openai:tiny@{server.base_url}"),
            GenerationRequest(messages=history, tools=[FOLLOWUP_TOOL], constrained=True),
        )
        first_body = _last_body(server)
        call = first.tool_calls[0]
        history += [
            ChatMessage(role="assistant", tool_calls=[call]),
            ChatMessage(role="tool", tool_call_id=call.id, content="sent"),
        ]
        second = _call(
            make_backend(f"openai:tiny@{server.base_url}"),
            GenerationRequest(messages=history, tools=[FOLLOWUP_TOOL]),
        )
        second_body = _last_body(server)
    assert (call.name, json.loads(call.arguments)) == ("followup", {"message": "Which day?"})
    assert first.finish_reason == "tool_calls"
    assert first_body["tools"] == [FOLLOWUP_TOOL]
    assert first_body["tool_choice"] == "required"  # constrained, native tools
    assert second.text == "second"
    assert second_body["messages"][2]["tool_calls"][0]["id"] == call.id
    assert second_body["messages"][3] == {
        "role": "tool",
        "content": "sent",
        "tool_call_id": call.id,
    }
    assert "tool_choice" not in second_body


def test_text_protocol_fallback() -> None:
    reply = '```json\n{"tool": "lookup", "arguments": {"area": "north"}}\n```'
    script = _script(replies=[reply])
    request = GenerationRequest(
        messages=[ChatMessage(role="user", content="find")],
        tools=[FOLLOWUP_TOOL, LOOKUP_TOOL],
        constrained=True,
    )
    with ServerProcess(ServerConfig(script=script)) as server:
        result = _call(make_backend(f"openai:tiny@{server.base_url}", tool_mode="text"), request)
        body = _last_body(server)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [
        ("lookup", {"area": "north"})
    ]
    assert "tools" not in body
    assert body["messages"][0]["role"] == "system"
    assert "lookup" in body["messages"][0]["content"]
    schema = body["response_format"]["json_schema"]["schema"]
    assert [o["properties"]["tool"]["const"] for o in schema["anyOf"]] == ["followup", "lookup"]


def test_bad_model_output_is_returned_not_raised() -> None:
    script = _script(
        replies=[
            {"tool_calls": [{"name": "followup", "arguments": '{"message": "unterminated'}]},
            "I think you want a hotel.",
        ]
    )
    with ServerProcess(ServerConfig(script=script)) as server:
        url = server.base_url
        native = _call(make_backend(f"openai:tiny@{url}"), user_request(tools=[FOLLOWUP_TOOL]))
        history = user_request(tools=[FOLLOWUP_TOOL])
        history.messages.append(ChatMessage(role="assistant", content="x"))
        text = _call(make_backend(f"openai:tiny@{url}", tool_mode="text"), history)
    assert native.tool_calls == [
        ToolCallOut(id="call_0", name="followup", arguments='{"message": "unterminated')
    ]
    assert text.tool_calls == [] and text.text == "I think you want a hotel."


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            "json_schema",
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": {"type": "object"}},
                }
            },
        ),
        ("json_object", {"response_format": {"type": "json_object", "schema": {"type": "object"}}}),
        ("guided_json", {"guided_json": {"type": "object"}}),
        ("none", {}),
    ],
)
def test_schema_modes_shape_the_request(mode: str, expected: dict[str, Any]) -> None:
    with ServerProcess(ServerConfig(script=_script(replies=['{"a": 1}']))) as server:
        backend = make_backend(f"openai:tiny@{server.base_url}", schema_mode=mode)  # type: ignore[arg-type]
        request = user_request(
            response_schema={"type": "object"}, max_tokens=9, extra={"top_p": 0.5}
        )
        assert _call(backend, request).text == '{"a": 1}'
        body = _last_body(server)
    for key in ("response_format", "guided_json"):
        assert body.get(key) == expected.get(key)
    assert body["max_tokens"] == 9 and body["top_p"] == 0.5


@pytest.mark.parametrize("kind", ["500", "429", "reset", "malformed", "truncated", "hang"])
def test_each_fault_is_retried_until_success(kind: str) -> None:
    faults = FaultConfig(sequence=[kind, kind], hang_s=3.0)
    with ServerProcess(ServerConfig(script=_script(replies=["fine"]), faults=faults)) as server:
        clock = FakeClock()
        policy = RetryPolicy(max_attempts=3, timeout_s=0.5)
        backend = make_backend(f"openai:tiny@{server.base_url}", retry=policy, clock=clock)
        result = _call(backend)
        stats = server.stats()
    assert result.text == "fine"
    assert stats["requests"] == 3
    assert stats["faults"] == {kind: 2}
    assert len(clock.sleeps) == 2


def test_retry_after_from_the_server_is_honoured() -> None:
    faults = FaultConfig(sequence=["429"], retry_after_s=3.0)
    with ServerProcess(ServerConfig(script=_script(replies=["fine"]), faults=faults)) as server:
        clock = FakeClock()
        result = _call(make_backend(f"openai:tiny@{server.base_url}", clock=clock))
    assert result.text == "fine"
    assert clock.sleeps == [3.0]


def test_persistent_faults_end_in_infrastructure_error() -> None:
    script = _script(replies=[{"raw_body": "<html>gateway</html>"}])
    with ServerProcess(ServerConfig(script=script)) as server:
        clock = FakeClock()
        backend = make_backend(
            f"openai:tiny@{server.base_url}", retry=RetryPolicy(max_attempts=4), clock=clock
        )
        with pytest.raises(InfrastructureError) as info:
            _call(backend)
        assert server.stats()["requests"] == 4
    assert info.value.kind == "malformed"
    assert "<html>gateway" in info.value.cause


def test_unreachable_endpoint_is_an_infrastructure_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    backend = make_backend(
        f"openai:tiny@http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_attempts=2),
        clock=FakeClock(),
    )
    with pytest.raises(InfrastructureError, match="connection error") as info:
        _call(backend)
    assert info.value.kind == "connection"


def test_wrong_model_name_and_bad_key_are_usage_errors() -> None:
    config = ServerConfig(models=["real"], api_key="sk-test-right")
    with ServerProcess(config) as server:
        url = server.base_url
        environ = {"K": "sk-test-wrong"}
        with pytest.raises(UsageError, match="refused the API key \\(401\\); check the variable K"):
            _call(make_backend(f"openai:real@{url}", api_key_env="K", environ=environ))
        environ = {"K": "sk-test-right"}
        with pytest.raises(UsageError, match="answered 404"):
            _call(make_backend(f"openai:fake@{url}", api_key_env="K", environ=environ))
        ok = _call(make_backend(f"openai:real@{url}", api_key_env="K", environ=environ))
    assert ok.text == "ok"


def test_rate_limited_endpoint_backs_off_and_completes() -> None:
    faults = FaultConfig(max_concurrent=4, latency_ms=30, retry_after_s=0.02)
    pool = LimiterPool()

    async def run(url: str) -> list[GenerationResult]:
        models = {"tiny": ModelEntry(spec=f"openai:tiny@{url}", connection_limit=16)}
        backend = make_backend("tiny", models, limiters=pool)
        try:
            return await asyncio.gather(
                *(backend.generate(user_request(f"q{i}"), role="s") for i in range(48))
            )
        finally:
            await backend.aclose()

    with ServerProcess(ServerConfig(script=_script(replies=["fine"]), faults=faults)) as server:
        url = server.base_url
        results = asyncio.run(run(url))
        stats = server.stats()
    limiter = pool.get(make_backend(f"openai:tiny@{url}").info)  # same endpoint, same limiter
    assert limiter.max_limit == 16
    assert [r.text for r in results] == ["fine"] * 48
    assert limiter.decreases >= 1
    assert stats["faults"].get("429_crowded", 0) >= 1
