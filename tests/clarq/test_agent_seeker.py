"""``todeval run clarq --seeker agent``: an external agent's chat endpoint (a scripted agent in
its own process on 127.0.0.1) plays the seeker, over each channel; its accounting; an endpoint
that fails ends the episode as the seeker's error; one-line usage errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.clarq.helpers import run_cli
from tests.clarq.selfplay import episodes, messages, metric, run_clarq, summary
from todeval.backends.scripted import Script
from todeval.cli import main
from todeval.testing.chat_agent_server import OPENAI_PATH, AgentConfig, ChatAgentProcess
from todeval.testing.server_process import unused_port

TASK = ("--task-ids", "Escort_Mission-0")
BRIEF = "You are playing the part of"  # the start of seeker_background_en


def _oracle_turns(tmp_path: Path) -> list[str]:
    """The oracle seeker's dialogue on TASK (greeting first): it succeeds."""
    run = run_clarq(tmp_path / "oracle", *TASK, "--seeker", "oracle")
    assert metric(run, "clarq.success") == 1.0
    return messages(episodes(run)[0])


def _good_script(turns: list[str]) -> Script:
    """Answers each of Jax's messages with the oracle's next utterance; the greeting only when
    it comes after the seeker's brief."""
    rules = []
    for i in range(0, len(turns) - 1, 2):
        jax = re.escape(turns[i]) + r"\Z"
        match = rf"\A{BRIEF}.*\n\n{jax}" if i == 0 else rf"\A{jax}"
        rules.append({"match": match, "reply": turns[i + 1]})
    return Script.model_validate({"rules": rules, "default": "Sorry, what?"})


def _run_agent(out: Path, url: str, *extra: str) -> Path:
    return run_clarq(out, *TASK, "--seeker", "agent", "--seeker-url", url, *extra)


@pytest.mark.parametrize("channel", ["openai-chat", "rasa-rest", "plain"])
def test_a_good_agent_seeker_plays_like_the_oracle(tmp_path: Path, channel: str) -> None:
    turns = _oracle_turns(tmp_path)
    config = AgentConfig(
        script=_good_script(turns), usage={"prompt_tokens": 11, "completion_tokens": 4}
    )
    with ChatAgentProcess(config) as agent:
        run = _run_agent(tmp_path / "agent", agent.url(channel), "--channel", channel)
        requests = agent.requests()
    assert metric(run, "clarq.success") == 1.0
    record = episodes(run)[0]
    assert messages(record) == turns  # the same dialogue as the oracle's
    assert record["outcome"] == "success" and record["labels"]["clarq.end"] == "goodbye"
    calls = len(turns) // 2
    assert len(requests) == calls
    first = requests[0]["body"]
    if channel == "openai-chat":
        assert [m["role"] for m in first["messages"]] == ["user"]
        sent = first["messages"][0]["content"]
        assert [m["role"] for m in requests[-1]["body"]["messages"]][-2:] == ["assistant", "user"]
        assert len(requests[-1]["body"]["messages"]) == 2 * calls - 1  # the whole chat so far
    else:
        sent = first["message"]
    assert sent.startswith(BRIEF)
    assert "escorting the injured" in sent and sent.endswith("\n\nJax: what can help you?")
    assert 'say "Goodbye"' in sent  # the seeker's instructions, as an LLM seeker gets them
    usage = summary(run)["usage"]["seeker"]
    assert usage["calls"] == calls
    if channel == "rasa-rest":  # Rasa reports no usage: unknown, never estimated
        assert usage["tokens_unknown_calls"] == calls and usage["prompt_tokens"] == 0
    else:
        assert usage["tokens_unknown_calls"] == 0
        assert (usage["prompt_tokens"], usage["completion_tokens"]) == (11 * calls, 4 * calls)
    manifest = json.loads((run / "manifest.json").read_text())
    seeker = manifest["roles"]["seeker"]
    assert seeker["player"] == "agent" and seeker["prompts_sha256"]
    assert {"seeker_url", "seeker_channel"} <= set(seeker["config_keys"])
    assert manifest["config"]["seeker_channel"] == channel


def test_an_agent_that_says_goodbye_at_once_scores_zero(tmp_path: Path) -> None:
    config = AgentConfig(script=Script.model_validate({"default": "Goodbye"}))
    with ChatAgentProcess(config) as agent:
        run = _run_agent(tmp_path / "quit", agent.url("plain"), "--channel", "plain")
    assert metric(run, "clarq.success") == 0.0
    record = episodes(run)[0]
    assert record["outcome"] == "failure" and record["labels"]["clarq.end"] == "quit"
    assert summary(run)["usage"]["seeker"]["tokens_unknown_calls"] == 1  # no usage reported


def _assert_seeker_error(run: Path, why: str) -> None:
    record: dict[str, Any] = episodes(run)[0]
    assert record["outcome"] == "system_error", record["reason"]
    assert record["termination"] == "system_error"
    assert record["labels"]["clarq.end"] == "seeker_error"
    assert why in record["reason"]
    outcomes = summary(run)["outcomes"]
    assert outcomes["system_error"] == 1 and outcomes["infrastructure_error"] == 0


def test_an_endpoint_answering_500_is_the_seekers_error(tmp_path: Path) -> None:
    config = AgentConfig(script=Script.model_validate({"default": "Hi"}), fail_paths=[OPENAI_PATH])
    with ChatAgentProcess(config) as agent:
        run = _run_agent(tmp_path / "e500", agent.url("openai-chat"))
    _assert_seeker_error(run, "HTTP 500")


def test_an_endpoint_that_is_down_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{unused_port()}/chat"
    out = tmp_path / "down"
    argv = ["run", "clarq", "--task-ids", "Escort_Mission-0", "--seeker", "agent",
            "--seeker-url", url, "--channel", "plain", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert url in err and "cannot reach the agent" in err and "Traceback" not in err
    assert episodes(out)[0]["outcome"] == "infrastructure_error"  # re-run by the same command


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--channel", "plain"], "--channel is for --seeker agent"),
        (["--seeker-url", "http://127.0.0.1:9/chat"], "--seeker-url is for --seeker agent"),
        (["--seeker", "agent"], "pass --seeker-url URL"),
        (["--seeker", "agent", "--seeker-url", "ftp://x"], "needs an http(s) URL"),
        (
            ["--seeker", "agent", "--seeker-url", "http://127.0.0.1:9/", "--seeker-model", "m"],
            "drop --seeker-model",
        ),
        (
            ["--seeker", "agent", "--seeker-url", "http://127.0.0.1:9/", "--seeker-mode", "chat"],
            "--seeker-mode applies to --seeker llm",
        ),
    ],
)
def test_agent_options_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    out = tmp_path / "x"
    code, _, stderr = run_cli(["run", "clarq", "--quiet", "--out", str(out), *TASK, *argv], capsys)
    assert code == 2 and expected in stderr, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert not out.exists()
