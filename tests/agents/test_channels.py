"""The chat channels against a small stand-alone endpoint (tests/agents/channel_server.py, a
real process): a failing agent endpoint is the system's error, the handoff reaches the agent,
the episode token never reaches the run directory, and reported usage is parsed strictly."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from todeval.agents.channels import AgentEndpoint, AgentEndpointError, ChatTurn, Handoff, _usage
from todeval.agents.tool_server import MCP_PATH
from todeval.cli import main
from todeval.testing.server_process import stop_process, unused_port

from . import channel_server
from .conftest import CHANNEL_PATHS, events, eventually, require, run_agent_booking

SERVER = Path(channel_server.__file__)
CHANNELS = list(CHANNEL_PATHS)


class ChannelServer:
    def __init__(self, port: int) -> None:
        self.port = port

    def url(self, mode: str, channel: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}{CHANNEL_PATHS[channel]}"

    def requests(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_requests", timeout=10) as r:
            found: list[dict[str, Any]] = json.loads(r.read())
        return found

    def requests_to(self, url: str) -> list[dict[str, Any]]:
        path = url.removeprefix(f"http://127.0.0.1:{self.port}")
        return [r for r in self.requests() if r["path"] == path]


@pytest.fixture(scope="module")
def server() -> Iterator[ChannelServer]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.isdigit(), line
        yield ChannelServer(int(line))
    finally:
        stop_process(process)


def closed_port_url(channel: str) -> str:
    """A URL on 127.0.0.1 where nothing listens (a port just bound and released)."""
    return f"http://127.0.0.1:{unused_port()}{CHANNEL_PATHS[channel]}"


def header(request: dict[str, Any], name: str) -> str | None:
    found = {k.lower(): v for k, v in request["headers"].items()}
    return found.get(name.lower())


# -- a failing endpoint is the system's error ------------------------------------------------

FAILURES = {
    "500": "answered HTTP 500",
    "echo-422": "answered HTTP 422",
    "malformed": "a body that is not JSON",
    "wrong-shape": "answered a body",
}


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failing_endpoint_is_a_system_error_not_retried(
    server: ChannelServer, tmp_path: Path, failure: str, channel: str
) -> None:
    require("mcp")
    url = server.url(failure, channel)
    run = run_agent_booking(tmp_path / "run", url, channel=channel)
    record = run.record
    assert run.exit_code == 0  # a system error is a result of the run
    assert record["outcome"] == "system_error"
    assert record["termination"] == "system_error"
    assert "AgentEndpointError" in record["reason"] and FAILURES[failure] in record["reason"]
    assert run.summary["outcomes"]["system_error"] == 1
    assert run.summary["outcomes"]["infrastructure_error"] == 0
    assert record["metrics"]["booking.booking_accuracy"] == 0.0  # counted, as a failure
    sent = server.requests_to(url)
    assert len(sent) == 1  # one request, never retried
    if sent:  # an error body echoing the request never puts the episode token in the run
        token = header(sent[0], "X-Todeval-Episode-Token")
        assert token and len(token) >= 20
        for path in (p for p in run.out.rglob("*") if p.is_file()):
            assert token.encode() not in path.read_bytes(), path
    # resuming the run does not play a system error again
    argv = ["run", "booking", "--user", "agenda?phrasing=verbatim",
            "--system", "agent", "--system-url", url, "--task-ids",
            "sng01936", "--out", str(run.out), "--quiet", "--channel", channel]  # fmt: skip
    assert main(argv) == 0
    assert len((run.out / "episodes.jsonl").read_text().splitlines()) == 1
    assert len(server.requests_to(url)) == 1


@pytest.mark.parametrize("channel", CHANNELS)
def test_an_endpoint_that_is_not_running_stops_the_run_and_stays_rerunnable(
    tmp_path: Path, channel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing ever answered: not the system's failure but a setup error (exit 2, one line
    naming the URL and the cause); the episode is not scored, and the same command plays it."""
    require("mcp")
    url = closed_port_url(channel)
    run = run_agent_booking(tmp_path / "run", url, channel=channel)
    assert run.exit_code == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("todeval:")]
    assert url in line and "cannot reach the agent" in line and "the only episode" in line
    assert run.record["outcome"] == "infrastructure_error"
    argv = ["run", "booking", "--user", "agenda?phrasing=verbatim",
            "--system", "agent", "--system-url", url, "--task-ids",
            "sng01936", "--out", str(run.out), "--quiet", "--channel", channel]  # fmt: skip
    assert main(argv) == 2  # played again, not "already complete"
    assert len((run.out / "episodes.jsonl").read_text().splitlines()) == 2


def test_a_hanging_endpoint_is_a_system_error(server: ChannelServer) -> None:
    """No answer within the endpoint's timeout: the episode is the system's error."""
    require("mcp")
    from tests.booking.test_llm_systems_support import play
    from todeval.benchmarks.booking.llm_systems.agent_system import AgentSystem, booking_hub
    from todeval.dialogue.participants import PlayerOptions

    url = server.url("hang", "plain")
    hub = booking_hub("test")
    extra = {"agent_hub": hub, "url": url, "channel": "plain", "timeout_s": 0.5}
    try:
        record = play(AgentSystem.from_options(PlayerOptions(role="system", extra=extra)))
    finally:
        if hub.tool_server is not None:
            hub.tool_server.stop()
    assert record.outcome.value == "system_error"
    assert "no answer from the agent" in record.reason
    assert len(eventually(lambda: server.requests_to(url), bool)) == 1


# -- the handoff -------------------------------------------------------------------------------


@pytest.mark.parametrize("channel", CHANNELS)
def test_the_handoff_reaches_the_agent_and_the_token_stays_out_of_the_run(
    server: ChannelServer, tmp_path: Path, channel: str
) -> None:
    require("mcp")
    url = server.url("ok", channel)
    run = run_agent_booking(tmp_path / "run", url, "--max-turns", "2", channel=channel)
    assert run.exit_code == 0
    assert run.record["outcome"] == "failure"  # the turn cap: this agent only greets
    sent = server.requests_to(url)
    assert len(sent) == 2  # one request per user turn
    tokens = {header(r, "X-Todeval-Episode-Token") for r in sent}
    mcp_urls = {header(r, "X-Todeval-Mcp-Url") for r in sent}
    conversations = {header(r, "X-Todeval-Conversation") for r in sent}
    assert len(tokens) == len(mcp_urls) == len(conversations) == 1  # one episode, one line
    [token], [mcp_url], [conversation] = tokens, mcp_urls, conversations
    assert token and len(token) >= 20
    assert conversation
    assert mcp_url and mcp_url.startswith("http://127.0.0.1:") and mcp_url.endswith(MCP_PATH)
    for request in sent:
        body = request["body"]
        metadata = {
            "todeval_conversation_id": conversation,
            "todeval_mcp_url": mcp_url,
            "todeval_episode_token": token,
        }
        if channel == "openai-chat":
            assert body["user"] == conversation and body["metadata"] == metadata
            assert body["messages"][-1]["role"] == "user"
        elif channel == "rasa-rest":
            assert body["sender"] == conversation and body["metadata"] == metadata
            assert isinstance(body["message"], str) and body["message"]
        else:
            assert body["conversation_id"] == conversation
            assert body["mcp"] == {"url": mcp_url, "token": token}
    # the whole dialogue goes to a stateless openai-chat endpoint, the last message otherwise
    if channel == "openai-chat":
        assert [m["role"] for m in sent[1]["body"]["messages"]] == ["user", "assistant", "user"]
    # the token is never written into the run directory
    files = [p for p in run.out.rglob("*") if p.is_file()]
    assert any(p.name == "episodes.jsonl" for p in files)
    for path in files:
        assert token.encode() not in path.read_bytes(), path
    # usage: the counts the endpoint reported, per reply (none from Rasa: unknown)
    usage = run.record["usage"]["system"]
    assert usage["calls"] == len(events(run.record, "system_message")) == 2
    if channel == "rasa-rest":
        assert usage["tokens_unknown_calls"] == 2 and usage["prompt_tokens"] == 0
    else:
        assert usage["tokens_unknown_calls"] == 0
        assert usage["prompt_tokens"] == 2 * channel_server.USAGE["prompt_tokens"]
        assert usage["completion_tokens"] == 2 * channel_server.USAGE["completion_tokens"]


# -- AgentEndpoint: replies and usage --------------------------------------------------------


def send(url: str, channel: str, **kwargs: Any) -> Any:
    endpoint = AgentEndpoint(url, channel, **kwargs)
    history = [ChatTurn(role="user", content="hello")]

    async def once() -> Any:
        try:
            return await endpoint.send(history, Handoff(conversation_id="c-1"))
        finally:
            await endpoint.clients.aclose()

    return asyncio.run(once())


@pytest.mark.parametrize("channel", ["openai-chat", "plain"])
def test_reported_usage_is_recorded(server: ChannelServer, channel: str) -> None:
    reply = send(server.url("ok", channel), channel)
    assert reply.text == channel_server.REPLY
    assert reply.usage.role == "system"
    assert reply.usage.tokens_unknown is False
    assert reply.usage.prompt_tokens == channel_server.USAGE["prompt_tokens"]
    assert reply.usage.completion_tokens == channel_server.USAGE["completion_tokens"]
    assert reply.usage.latency_s > 0


@pytest.mark.parametrize("mode", ["no-usage", "bad-usage"])
@pytest.mark.parametrize("channel", ["openai-chat", "plain"])
def test_absent_or_invalid_usage_is_unknown(server: ChannelServer, channel: str, mode: str) -> None:
    reply = send(server.url(mode, channel), channel)
    assert reply.text == channel_server.REPLY
    assert reply.usage.tokens_unknown is True
    assert reply.usage.prompt_tokens == reply.usage.completion_tokens == 0


def test_rasa_reports_no_usage(server: ChannelServer) -> None:
    reply = send(server.url("ok", "rasa-rest"), "rasa-rest")
    assert reply.text == channel_server.REPLY
    assert reply.usage.tokens_unknown is True


def test_a_handoff_without_tools_sends_no_token(server: ChannelServer) -> None:
    url = server.url("ok", "openai-chat")
    send(url, "openai-chat")
    request = server.requests_to(url)[-1]
    assert header(request, "X-Todeval-Conversation") == "c-1"
    assert header(request, "X-Todeval-Episode-Token") is None
    assert request["body"]["metadata"] == {"todeval_conversation_id": "c-1"}


def test_a_hang_times_out(server: ChannelServer) -> None:
    with pytest.raises(AgentEndpointError, match="no answer from the agent"):
        send(server.url("hang", "openai-chat"), "openai-chat", timeout_s=0.3)


@pytest.mark.parametrize(
    ("usage", "known"),
    [
        ({"prompt_tokens": 3, "completion_tokens": 0}, True),
        (None, False),
        ({}, False),
        ({"prompt_tokens": 3}, False),
        ({"prompt_tokens": -1, "completion_tokens": 2}, False),
        ({"prompt_tokens": 1.5, "completion_tokens": 2}, False),
        ({"prompt_tokens": "3", "completion_tokens": 2}, False),
        ({"prompt_tokens": True, "completion_tokens": 2}, False),
        ({"prompt_tokens": 10**12, "completion_tokens": 2}, False),
    ],
)
def test_usage_counts_are_trusted_only_when_both_are_valid(
    usage: dict[str, Any] | None, known: bool
) -> None:
    recorded = _usage("system", "m", usage, 0.1)
    assert recorded.tokens_unknown is (not known)
    if known:
        assert (recorded.prompt_tokens, recorded.completion_tokens) == (3, 0)
    else:
        assert recorded.prompt_tokens == recorded.completion_tokens == 0


def run_in_child(out: Path, url: str, channel: str, *args: str) -> dict[str, Any]:
    """``todeval run booking --system agent`` as a child process (a regression that hangs
    fails the test instead of the suite); the run's only episode record."""
    argv = ["run", "booking", "--user", "agenda?phrasing=verbatim",
            "--system", "agent", "--system-url", url, "--channel", channel,
            "--task-ids", "sng01936", "--out", str(out), "--quiet", *args]  # fmt: skip
    try:
        done = subprocess.run(
            [sys.executable, "-m", "todeval", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the episode waited for ever")
    assert done.returncode == 0, done.stderr
    [line] = (out / "episodes.jsonl").read_text().splitlines()
    record: dict[str, Any] = json.loads(line)
    return record


@pytest.mark.parametrize("channel", CHANNELS)
def test_an_item_of_the_wrong_type_is_a_system_error(
    server: ChannelServer, tmp_path: Path, channel: str
) -> None:
    """``choices: ["..."]`` and the like: the agent's shape error, never a crash of the
    conversation (which left the episode waiting for ever)."""
    require("mcp")
    record = run_in_child(tmp_path / "run", server.url("bad-item", channel), channel)
    assert record["outcome"] == "system_error"
    assert "AgentEndpointError" in record["reason"] and "answered a body" in record["reason"]


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_rejected_reply_under_reprompt_is_sent_back_to_the_agent(
    server: ChannelServer, tmp_path: Path, channel: str
) -> None:
    """Under strict an empty reply is a violation; with ``--on-violation reprompt`` the notice
    goes to the agent as its next message (no tool call is waiting for it), and the second
    empty reply aborts the episode. Run as a child process: a regression would hang."""
    require("mcp")
    url = server.url("empty", channel)
    before = len(server.requests_to(url))
    args = ("--protocol", "strict", "--on-violation", "reprompt")
    record = run_in_child(tmp_path / "run", url, channel, *args)
    assert record["outcome"] == "aborted" and record["termination"] == "format_violation"
    assert [e["kind"] for e in record["events"]] == [
        "user_message", "violation", "violation", "episode_end"
    ]  # fmt: skip
    assert all(
        e["data"]["reason"] == "empty follow-up message" for e in events(record, "violation")
    )
    sent = server.requests_to(url)[before:]
    assert len(sent) == 2
    second = sent[1]["body"]
    if channel == "openai-chat":
        assert second["messages"][-1] == {
            "role": "user", "content": "call rejected: empty follow-up message"
        }  # fmt: skip
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    else:
        assert second["message"] == "call rejected: empty follow-up message"


def test_system_timeout_bounds_each_agent_request(server: ChannelServer, tmp_path: Path) -> None:
    """``--system-timeout`` is the agent's time per reply: a hang ends the episode as the
    system's error after that long (run as a child process: a regression would hang)."""
    require("mcp")
    url = server.url("hang", "plain")
    record = run_in_child(tmp_path / "run", url, "plain", "--system-timeout", "0.5")
    assert record["outcome"] == "system_error"
    assert "within 0.5 s" in record["reason"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["system_timeout_s"] == 0.5


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--system", "agent", "--system-url", "http://127.0.0.1:9/", "--system-timeout", "0"],
         "positive"),
        (["--system", "agent", "--system-url", "http://127.0.0.1:9/", "--system-timeout", "inf"],
         "positive"),
        (["--system-timeout", "5"], "--system http and --system agent"),
    ],
)  # fmt: skip
def test_bad_system_timeouts_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    argv = [
        "run",
        "booking",
        "--user",
        "agenda?phrasing=verbatim",
        *args,
        "--limit",
        "1",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    assert not (tmp_path / "run" / "episodes.jsonl").exists()
