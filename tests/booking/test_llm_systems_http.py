"""The http system against the example server (a real process) and small in-test servers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from todeval.benchmarks.booking.llm_systems.http_system import HttpSystem, SystemEndpointError
from todeval.benchmarks.booking.messages import UserMessage
from todeval.cli import main
from todeval.core.outcome import Outcome
from todeval.dialogue.participants import PlayerOptions
from todeval.errors import UsageError
from todeval.testing.server_process import unused_port

from .test_llm_systems_support import context, events, play

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "http_system_server.py"


@pytest.fixture(scope="module")
def example_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield line.removeprefix("listening on ")
    finally:
        process.terminate()
        process.wait(timeout=10)


def http_system(url: str, **extra: Any) -> HttpSystem:
    return HttpSystem.from_options(PlayerOptions(role="system", extra={"url": url, **extra}))


def test_example_server_books_task_0(example_url: str) -> None:
    record = play(http_system(example_url))
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert events(record, "db_query")[0]["arguments"] == {"name": "city centre north b and b"}
    messages = [e["text"] for e in events(record, "system_message")]
    assert messages[-1].startswith("Booked! Your reference number is ")
    # one accounted call per system output, under the role "system"
    assert record.usage["system"].calls == record.metrics["booking.system_calls"] == 4


def test_example_server_keeps_sessions_apart(example_url: str) -> None:
    async def two_episodes() -> list[str]:
        from todeval.benchmarks.booking.game import play_episode

        from .scripted import ScriptedUser
        from .test_llm_systems_support import TASK, USER_LINES

        records = await asyncio.gather(
            *(
                play_episode(TASK, http_system(example_url), ScriptedUser(list(USER_LINES)),
                             run_seed=seed)
                for seed in (1, 2)
            )
        )  # fmt: skip
        return [r.outcome.value for r in records]

    assert asyncio.run(two_episodes()) == ["success", "success"]


def test_unreachable_endpoint_is_a_system_error() -> None:
    url = f"http://127.0.0.1:{unused_port()}/"
    system = http_system(url)

    async def respond() -> None:
        await system.start(context())
        await system.respond(UserMessage(text="hi"))

    with pytest.raises(SystemEndpointError, match="cannot reach"):
        asyncio.run(respond())
    record = play(http_system(url))
    assert record.outcome is Outcome.SYSTEM_ERROR
    assert record.termination == "system_error"


Responder = Callable[[dict[str, Any]], tuple[int, str]]


class _Server:
    """A stdlib server on 127.0.0.1 answering with ``responder(request JSON)``."""

    def __init__(self, responder: Responder, delay_s: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if delay_s:
                    time.sleep(delay_s)
                status, text = responder(body)
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up (timeout test)
                    self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_protocol_payloads_and_reported_usage() -> None:
    def responder(body: dict[str, Any]) -> tuple[int, str]:
        reply = {
            "action": {"name": "followup", "arguments": {"message": "Hello!"}},
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "model": "my-model"},
        }
        return 200, json.dumps(reply)

    with _Server(responder) as server:
        record = play(http_system(server.url), ["hi", "anything else"])
    first, second = server.requests
    assert first["observation"] == {"kind": "user_message", "text": "hi"}
    assert first["task_set"] == "test" and len(first["tools"]) == 7
    assert "tools" not in second and second["session_id"] == first["session_id"]
    assert record.usage["system"].prompt_tokens == 24
    assert record.usage["system"].completion_tokens == 6
    assert record.outcome is Outcome.FAILURE  # said done without a booking


@pytest.mark.parametrize(
    ("body", "raw"),
    [
        ("this is not json", "this is not json"),
        ('{"text": "I will think about it"}', "I will think about it"),
        ('{"action": {"arguments": {}}}', '{"action": {"arguments": {}}}'),
    ],
)
def test_bad_responses_are_format_violations(body: str, raw: str) -> None:
    with _Server(lambda request: (200, body)) as server:
        record = play(http_system(server.url))
    assert record.outcome is Outcome.ABORTED
    (violation,) = record.details["violations"]
    assert violation["reason"] == "no tool call" and violation["raw"] == raw


def test_invalid_action_arguments_are_judged_by_the_game_master() -> None:
    body = json.dumps({"action": {"name": "retrievefromhoteldb", "arguments": {"stars": "9"}}})
    with _Server(lambda request: (200, body)) as server:
        record = play(http_system(server.url))
    assert record.outcome is Outcome.ABORTED
    assert "stars" in record.details["violations"][0]["reason"]


def test_server_error_status_is_a_system_error() -> None:
    with _Server(lambda request: (500, "boom")) as server:
        record = play(http_system(server.url))
    assert record.outcome is Outcome.SYSTEM_ERROR
    assert record.termination == "system_error"
    assert "HTTP 500" in record.reason


def test_timeout_is_a_system_error() -> None:
    with _Server(lambda request: (200, "{}"), delay_s=2.0) as server:
        system = http_system(server.url, timeout_s=0.2)

        async def respond() -> None:
            await system.start(context())
            await system.respond(UserMessage(text="hi"))

        with pytest.raises(SystemEndpointError, match="no answer"):
            asyncio.run(respond())


def test_url_is_required() -> None:
    with pytest.raises(UsageError, match="--system-url"):
        HttpSystem.from_options(PlayerOptions(role="system"))
    with pytest.raises(UsageError, match="http"):
        http_system("ftp://example")


def test_a_run_against_a_failing_endpoint_scores_every_task(tmp_path: Path) -> None:
    """Every call answered 500: each episode is a system error, and the run's accuracy is 0
    over all tasks (none excluded), not an empty table."""
    out = tmp_path / "run"
    with _Server(lambda request: (500, "internal error")) as server:
        argv = ["run", "booking", "--system", "http", "--system-url", server.url, "--limit", "6"]
        assert main([*argv, "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["outcomes"]["system_error"] == 6 and summary["excluded"] == {}
    accuracy = summary["metrics"]["booking.booking_accuracy"]["micro"]
    assert accuracy["value"] == 0.0 and accuracy["n"] == 6
    assert summary["labels"]["failure_class"] == {"system_error": 6}


def _counting_example_server() -> tuple[ThreadingHTTPServer, list[int]]:
    """The example server (HTTP/1.1, keep-alive) in this process, counting accepted TCP
    connections and answered requests: ``counts == [connections, requests]``."""
    import runpy

    example = runpy.run_path(str(EXAMPLE))
    handler: type[BaseHTTPRequestHandler] = example["Handler"]
    base: type[ThreadingHTTPServer] = example["SystemServer"]
    counts = [0, 0]
    lock = threading.Lock()

    class Counted(handler):  # type: ignore[valid-type,misc]
        def do_POST(self) -> None:
            with lock:
                counts[1] += 1
            super().do_POST()

    class Counting(base):  # type: ignore[valid-type,misc]
        def __init__(self, address: tuple[str, int]) -> None:
            super().__init__(address)
            self.RequestHandlerClass = Counted

        def get_request(self) -> tuple[socket.socket, Any]:
            pair: tuple[socket.socket, Any] = super().get_request()
            with lock:
                counts[0] += 1
            return pair

    server: ThreadingHTTPServer = Counting(("127.0.0.1", 0))
    return server, counts


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_run_reuses_its_connections(tmp_path: Path, concurrency: int) -> None:
    """One keep-alive client per run: the endpoint sees at most one TCP connection per episode
    in flight, however many observations it answers (a client per request made one each)."""
    server, counts = _counting_example_server()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    out = tmp_path / "run"
    try:
        argv = ["run", "booking", "--system", "http", "--system-url", url, "--limit", "8"]
        options = ["--max-concurrency", str(concurrency), "--out", str(out), "--quiet"]
        assert main([*argv, *options]) == 0
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    connections, requests = counts
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_episodes"] == 8 and summary["outcomes"].get("system_error", 0) == 0
    assert requests >= 8 * 3  # several observations per episode
    assert 1 <= connections <= concurrency, counts


def test_the_shared_client_is_closed_with_the_run() -> None:
    from todeval.benchmarks.booking.llm_systems.http_system import HttpClients

    clients = HttpClients()

    async def use() -> bool:
        first = clients.client()
        assert clients.client() is first  # the same client for every call of this loop
        await clients.aclose()
        return first.is_closed

    assert asyncio.run(use())


def test_an_error_body_echoing_a_key_is_recorded_redacted() -> None:
    body = "proxy error: you sent Authorization: Bearer sk-fake-01234567"
    with _Server(lambda request: (502, body)) as server:
        record = play(http_system(server.url))
    assert record.outcome is Outcome.SYSTEM_ERROR
    assert "Bearer [redacted]" in record.reason and "01234567" not in record.reason
