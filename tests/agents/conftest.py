"""Shared pieces of the external-agent tests: the scripted model server and the example Agents
SDK agent as real processes, and a booking run through the CLI."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from todeval.backends.scripted import Script, ScriptedReply
from todeval.cli import main
from todeval.testing.openai_server import ServerConfig, _messages
from todeval.testing.server_process import ServerProcess, stop_process

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agents_sdk_agent.py"
TASK_ID = "sng01936"
"""Test task 0: book city centre north b and b for 1 person, 5 nights from friday."""

CHANNEL_PATHS = {
    "openai-chat": "/v1/chat/completions",
    "rasa-rest": "/webhooks/rest/webhook",
    "plain": "/chat",
}

HOTEL = "city centre north b and b"
BOOKING_ARGS = {
    "area": "north",
    "pricerange": "cheap",
    "type": "guesthouse",
    "internet": "yes",
    "parking": "yes",
    "name": HOTEL,
    "stars": "0",
    "people": "1",
    "day": "friday",
    "stay": "5",
}


def require(module: str) -> None:
    """Import ``module``, or skip -- but fail under CI=true, where it must be installed."""
    try:
        importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not installed but CI=true requires it")
        pytest.skip(f"{module} not installed")


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def booking_rules(usage: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The model script that books test task 0: search by name, offer, book, confirm."""
    extra = {"usage": usage} if usage else {}
    offer = (
        f"How about {HOTEL}, a cheap guesthouse in the north? "
        "How many people, which day, and how many nights?"
    )
    return [
        {
            "match": f"by the name of {HOTEL}",
            "reply": {**tool_call("retrievefromhoteldb", {"name": HOTEL}), **extra},
        },
        {"match": '"total":1', "reply": {"text": offer, **extra}},
        {
            "match": "1 person.*5 nights.*friday",
            "reply": {**tool_call("validatehotelbooking", BOOKING_ARGS), **extra},
        },
        {
            "match": r"Reference number: (\w+)",
            "expand": True,
            "reply": {"text": r"Booked! Your reference number is \1. Anything else?", **extra},
        },
    ]


def make_script(rules: list[dict[str, Any]], default: str | dict[str, Any]) -> Script:
    return Script.model_validate({"rules": rules, "default": default})


@dataclass
class AgentStack:
    """The scripted model server and the example agent that uses it."""

    model: ServerProcess
    script: Script
    agent_port: int

    def url(self, channel: str) -> str:
        return f"http://127.0.0.1:{self.agent_port}{CHANNEL_PATHS[channel]}"

    def mark(self) -> int:
        """How many model requests have been recorded so far (see :meth:`served_since`)."""
        return len(self.model.requests())

    def served_since(self, mark: int) -> list[tuple[dict[str, Any], ScriptedReply]]:
        """(request body, the scripted reply it was served) for each request after ``mark``."""
        recent = self.model.requests()
        assert len(recent) < 200, "the server's request log is full: mark() is unreliable"
        out = []
        for entry in recent[mark:]:
            body = entry["body"]
            out.append((body, self.script.select(_messages(body))))
        return out


def eventually(probe: Callable[[], T], done: Callable[[T], bool], wait_s: float = 30.0) -> T:
    """``probe()`` again until ``done`` holds of its value (or ``wait_s`` has passed): for what
    a process does after the run returned. The caller asserts on the value it gets."""
    deadline = time.monotonic() + wait_s
    value = probe()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = probe()
    return value


def _first_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    found: list[str] = []
    assert process.stdout is not None
    stdout = process.stdout
    reader = threading.Thread(target=lambda: found.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return found[0].strip() if found else ""


@contextlib.contextmanager
def agent_stack(script: Script, *agent_args: str) -> Iterator[AgentStack]:
    """Start the model server and the example agent (real processes, the agent with
    ``agent_args``); stop both on exit."""
    require("agents")
    require("mcp")
    with contextlib.ExitStack() as stack:
        model = stack.enter_context(ServerProcess(ServerConfig(script=script)))
        stderr = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
        argv = [sys.executable, str(EXAMPLE), "--host", "127.0.0.1", "--port", "0"]
        process = subprocess.Popen(
            [*argv, "--model-url", model.base_url, *agent_args],
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "OPENAI_AGENTS_DISABLE_TRACING": "1"},
        )
        stack.callback(stop_process, process)
        ready = re.match(r"ready http://127\.0\.0\.1:(\d+) ", _first_line(process, 60))
        if ready is None:
            process.poll()
            stderr.seek(0)
            pytest.fail(f"the example agent did not start: {stderr.read()[-2000:]}")
        yield AgentStack(model=model, script=script, agent_port=int(ready.group(1)))


@pytest.fixture(scope="module")
def booking_stack() -> Iterator[AgentStack]:
    """The example agent with the model script that books test task 0 (in any trial's phrasing;
    and answers the first message of task mul1664 with two tool calls in one response); every
    model reply reports 100 prompt and 7 completion tokens."""
    both = {"tool_calls": [
        {"name": "retrievefromrestaurantdb", "arguments": {"name": "the varsity restaurant"}},
        {"name": "retrievefromtraindb", "arguments": {"day": "friday", "destination": "ely"}},
    ], "usage": {"prompt_tokens": 100, "completion_tokens": 7}}  # fmt: skip
    parallel = {"match": "restaurant by the name of the varsity restaurant", "reply": both}
    usage = {"prompt_tokens": 100, "completion_tokens": 7}
    rules = booking_rules(usage)
    # the other trials' phrasings of test task 0 (after the DB result's rule: a result names
    # the hotel too)
    book_any = {**rules[2], "match": "(?=.*1 person)(?=.*5 nights)(?=.*friday)"}
    search_any = {**rules[0], "match": HOTEL}
    script = make_script(
        [*rules, parallel, book_any, search_any],
        {"text": "Sorry, could you say that again?", "usage": {"prompt_tokens": 100,
                                                              "completion_tokens": 7}},
    )  # fmt: skip
    with agent_stack(script) as stack:
        yield stack


@dataclass
class RunResult:
    exit_code: int
    out: Path
    record: dict[str, Any]
    manifest: dict[str, Any]
    summary: dict[str, Any]


def run_agent_booking(
    out: Path, url: str, *args: str, channel: str | None = None, task_id: str = TASK_ID
) -> RunResult:
    """``todeval run booking --system agent`` in-process; the run's only episode record."""
    argv = ["run", "booking", "--user", "agenda?phrasing=verbatim",
            "--system", "agent", "--system-url", url, "--task-ids", task_id,
            "--out", str(out), "--quiet", *args]  # fmt: skip
    if channel is not None:
        argv += ["--channel", channel]
    code = main(argv)
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1, lines
    return RunResult(
        exit_code=code,
        out=out,
        record=json.loads(lines[0]),
        manifest=json.loads((out / "manifest.json").read_text(encoding="utf-8")),
        summary=json.loads((out / "summary.json").read_text(encoding="utf-8")),
    )


def kinds(record: dict[str, Any]) -> list[str]:
    return [e["kind"] for e in record["events"]]


def events(record: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in record["events"] if e["kind"] == kind]


def text_of(message: dict[str, Any]) -> str:
    """A chat message's text (a string, or a list of text parts as the Agents SDK sends)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""
