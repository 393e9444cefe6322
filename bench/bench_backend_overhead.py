"""Harness overhead per model call: the scripted backend through the full wrapper stack.

What is timed is everything the model layer adds around a model that answers instantly:
``RetryingBackend`` (timeout, connection-limit slot, retry loop) around ``ScriptedBackend``
(reply selection, tool-call objects, accounting: token estimate or server counts, dollar cost,
FLOPs), with the response cache off -- and, for comparison, a cache hit. The request is a
realistic booking call: a system prompt, 12 turns of history and the seven booking tools.

Target (issue 3): well under 1 ms per call. Prints microseconds per call and the ratio to 1 ms.

    python bench/bench_backend_overhead.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from todeval.backends import (
    Backend,
    CachingBackend,
    ChatMessage,
    GenerationRequest,
    ResponseCache,
    ScriptedReply,
    make_backend,
)
from todeval.backends.openai_backend import build_request, parse_completion_body
from todeval.benchmarks.booking.schema import tool_definitions
from todeval.testing.openai_server import completion_body

TARGET_US = 1000.0


def booking_request(turns: int = 12) -> GenerationRequest:
    messages = [ChatMessage(role="system", content="You are a booking assistant. " * 20)]
    for i in range(turns):
        messages.append(ChatMessage(role="user", content=f"I need a cheap hotel, turn {i}."))
        messages.append(ChatMessage(role="assistant", content=f"Which area, turn {i}?"))
    messages.append(ChatMessage(role="user", content="In the north, please."))
    return GenerationRequest(messages=messages, tools=tool_definitions("test"), seed=1)


REPLY_WITH_USAGE = ScriptedReply.model_validate(
    {
        "tool_calls": [{"name": "retrievefromhoteldb", "arguments": {"area": "north"}}],
        "usage": {"prompt_tokens": 1500, "completion_tokens": 20},
    }
)
REPLY_NO_USAGE = REPLY_WITH_USAGE.model_copy(update={"usage": None})


def _timed(run: Callable[[], Coroutine[Any, Any, None]], calls: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(run())
    return (
        (time.perf_counter() - wall) / calls * 1e6,
        (time.process_time() - cpu) / calls * 1e6,
    )


def sequential(backend: Backend, request: GenerationRequest, calls: int) -> tuple[float, float]:
    async def run() -> None:
        for _ in range(calls):
            await backend.generate(request, role="system")

    return _timed(run, calls)


def concurrent(
    backend: Backend, request: GenerationRequest, calls: int, width: int
) -> tuple[float, float]:
    async def worker(n: int) -> None:
        for _ in range(n):
            await backend.generate(request, role="system")

    async def run() -> None:
        await asyncio.gather(*(worker(calls // width) for _ in range(width)))

    return _timed(run, calls // width * width)


def openai_codec(backend: Backend, request: GenerationRequest, calls: int) -> tuple[float, float]:
    """The openai backend's own work per call, without SDK and HTTP: build and parse."""
    body = completion_body(REPLY_WITH_USAGE, {"model": "m"}, default_usage=True)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        build_request(backend.info, request)
        parse_completion_body(body)
    return (
        (time.perf_counter() - wall) / calls * 1e6,
        (time.process_time() - cpu) / calls * 1e6,
    )


def report(label: str, figures: tuple[float, float]) -> None:
    wall, cpu = figures
    print(
        f"{label:<58} {wall:8.1f} us/call  (CPU {cpu:7.1f} us)  "
        f"ratio to 1 ms target: {wall / TARGET_US:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    calls = args.calls
    request = booking_request()
    print(f"{calls} calls per row; request: {len(request.messages)} messages, 7 tools")

    def fixed(reply: ScriptedReply) -> Callable[[GenerationRequest], ScriptedReply]:
        return lambda _request: reply

    with_usage = make_backend("scripted:bench", script=fixed(REPLY_WITH_USAGE))
    no_usage = make_backend("scripted:bench", script=fixed(REPLY_NO_USAGE))
    sequential(with_usage, request, min(calls, 500))  # warm-up
    report(
        "retry + scripted + accounting (server usage), sequential",
        sequential(with_usage, request, calls),
    )
    report(
        "retry + scripted + accounting (chars/4 estimate), sequential",
        sequential(no_usage, request, calls),
    )
    report(
        "retry + scripted + accounting, 100 coroutines", concurrent(with_usage, request, calls, 100)
    )
    openai_info = make_backend("openai:m@http://127.0.0.1:9/v1")
    report(
        "openai backend: build request + parse body (no HTTP)",
        openai_codec(openai_info, request, calls),
    )
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        cached = make_backend("scripted:bench", script=fixed(REPLY_WITH_USAGE))
        # the scripted backend is never cached by make_backend; wrap it by hand for the figure
        hit_backend = CachingBackend(cached, cache)
        asyncio.run(hit_backend.generate(request, role="system"))
        report(
            "cache hit (key hash + SQLite read), sequential",
            sequential(hit_backend, request, calls),
        )
        cache.close()


if __name__ == "__main__":
    main()
