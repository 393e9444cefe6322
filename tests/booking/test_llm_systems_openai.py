"""The monolithic system through the real OpenAI SDK against the test server process.

Checks that the chat history the system builds (tool results answering tool calls) goes over
the wire in OpenAI's shape, and that the server's usage reaches the episode record.
"""

from __future__ import annotations

import asyncio
from typing import Any

from todeval.backends import Script, make_backend
from todeval.benchmarks.booking.game import play_episode
from todeval.benchmarks.booking.llm_systems.monolithic import MonolithicSystem
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

from .scripted import ScriptedUser
from .test_llm_systems_monolithic import GOOD
from .test_llm_systems_support import TASK, USER_LINES, options


async def _episode(base_url: str) -> EpisodeRecord:
    backend = make_backend(f"openai:scripted@{base_url}")  # one event loop for client and game
    try:
        system = MonolithicSystem.from_options(options(backend))
        user = ScriptedUser(list(USER_LINES))
        return await play_episode(TASK, system, user, run_seed=0)
    finally:
        await backend.aclose()


def test_monolithic_over_real_http_books_task_0() -> None:
    config = ServerConfig(script=Script(replies=GOOD))
    with ServerProcess(config) as server:
        record = asyncio.run(_episode(server.base_url))
        bodies: list[dict[str, Any]] = [r["body"] for r in server.requests()]
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert record.usage["system"].calls == 4
    assert record.usage["system"].prompt_tokens == 400  # the server's usage, not an estimate
    assert not record.usage["system"].estimated
    last = bodies[-1]
    assert len(last["tools"]) == 7 and last["tools"][0]["function"]["name"] == "followup"
    roles = [m["role"] for m in last["messages"]]
    assert roles == [
        "system", "user", "assistant", "tool", "assistant", "tool", "user",
        "assistant", "tool",
    ]  # fmt: skip
    for index, message in enumerate(last["messages"]):
        if message["role"] == "tool":
            call = last["messages"][index - 1]["tool_calls"][0]
            assert message["tool_call_id"] == call["id"]
