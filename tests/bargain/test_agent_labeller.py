"""``todeval run bargain --labeller agent``: an external agent's chat endpoint (a scripted agent
in its own process on 127.0.0.1) labels the turns, over each channel; its accounting; an
endpoint that fails is the labeller's error; one-line usage errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.scripted import Script
from todeval.benchmarks.bargain.data import load_track
from todeval.cli import main
from todeval.testing.chat_agent_server import OPENAI_PATH, AgentConfig, ChatAgentProcess
from todeval.testing.server_process import unused_port

DIALOGUES = ("cb-000", "cb-001")
IDS = ("--track", "craigslist", "--dialogue-ids", *DIALOGUES)


def _gold_script() -> tuple[Script, int]:
    """Answers each labelled turn of DIALOGUES with its gold acts (the turn is the last line of
    the prompt's dialogue); the number of labelled turns."""
    rules = []
    for d in load_track("craigslist", "test", None):
        if d.dialogue_id not in DIALOGUES:
            continue
        for turn in d.turns:
            said = re.escape(f"{turn.speaker}: {d.utterances[turn.index].text}")
            labels = json.dumps({"labels": list(turn.gold)})
            rules.append({"match": rf"{said}\n\nWhich of these", "reply": labels})
    return Script.model_validate({"rules": rules, "default": "I do not know."}), len(rules)


def _run(out: Path, *argv: str) -> dict[str, Any]:
    # one dialogue at a time: the tests read the agent's requests in the order they were sent
    code = main(["run", "bargain", *IDS, "--labeller", "agent", "--out", str(out), "--quiet",
                 "--max-concurrency", "1", *argv])  # fmt: skip
    assert code == 0, argv
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def _episodes(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("channel", ["openai-chat", "rasa-rest", "plain"])
def test_an_agent_answering_the_gold_scores_f1_one(tmp_path: Path, channel: str) -> None:
    script, turns = _gold_script()
    config = AgentConfig(script=script, usage={"prompt_tokens": 100, "completion_tokens": 7})
    with ChatAgentProcess(config) as agent:
        s = _run(tmp_path / "gold", "--labeller-url", agent.url(channel), "--channel", channel)
        requests = agent.requests()
    f1 = s["metrics"]["bargain.f1"]["micro"]
    assert f1["value"] == 1.0 and f1["n"] == turns
    assert s["metrics"]["bargain.failure_rate"]["micro"]["value"] == 0.0
    assert s["outcomes"]["success"] == len(DIALOGUES)
    assert len(requests) == turns  # one request per labelled turn
    body = requests[0]["body"]
    prompt = body["messages"][0]["content"] if channel == "openai-chat" else body["message"]
    if channel == "openai-chat":
        assert len(body["messages"]) == 1  # one prompt per turn, as the llm labeller sends
    assert prompt.startswith("You are the seller in an online second-hand marketplace chat.")
    assert "listing price: $6200" in prompt and "- inquire: " in prompt
    assert '{"labels": ["<id>"]}' in prompt  # the example's form, no label prior
    ids = [r["body"].get("user") or r["body"].get("sender") or r["body"].get("conversation_id")
           for r in requests]  # fmt: skip
    assert len(set(ids)) == turns  # every turn a conversation of its own
    usage = s["usage"]["labeller"]
    assert usage["calls"] == turns
    if channel == "rasa-rest":
        assert usage["tokens_unknown_calls"] == turns and usage["prompt_tokens"] == 0
    else:
        assert usage["tokens_unknown_calls"] == 0
        assert (usage["prompt_tokens"], usage["completion_tokens"]) == (100 * turns, 7 * turns)
    manifest = json.loads((tmp_path / "gold" / "manifest.json").read_text())
    role = manifest["roles"]["labeller"]
    assert role["player"] == "agent" and role["prompts_sha256"]
    assert role["config_keys"] == ["labeller", "model", "labeller_url", "labeller_channel"]


def test_an_agent_answering_garbage_fails_every_turn(tmp_path: Path) -> None:
    _, turns = _gold_script()
    config = AgentConfig(script=Script.model_validate({"default": "~~ lorem ipsum ~~"}))
    with ChatAgentProcess(config) as agent:
        s = _run(tmp_path / "bad", "--labeller-url", agent.url("plain"), "--channel", "plain")
    assert s["metrics"]["bargain.failure_rate"]["micro"]["value"] == 1.0
    assert s["metrics"]["bargain.recall"]["micro"]["value"] == 0.0
    assert s["outcomes"]["failure"] == len(DIALOGUES)
    assert s["usage"]["labeller"]["tokens_unknown_calls"] == turns
    record = _episodes(tmp_path / "bad")[0]
    assert record["labels"]["reading"] == "none read"
    violations = [e for e in record["events"] if e["kind"] == "violation"]
    assert violations and violations[0]["data"]["raw"] == "~~ lorem ipsum ~~"


def _assert_labeller_error(s: dict[str, Any], out: Path, why: str) -> None:
    assert s["outcomes"]["system_error"] == len(DIALOGUES)
    assert s["outcomes"]["infrastructure_error"] == 0
    assert s["metrics"]["bargain.failure_rate"]["micro"]["value"] == 1.0  # the turns left
    for record in _episodes(out):
        assert record["outcome"] == "system_error" and why in record["reason"]


def test_an_endpoint_answering_500_is_the_labellers_error(tmp_path: Path) -> None:
    config = AgentConfig(fail_paths=[OPENAI_PATH])
    with ChatAgentProcess(config) as agent:
        s = _run(tmp_path / "e500", "--labeller-url", agent.url("openai-chat"))
    _assert_labeller_error(s, tmp_path / "e500", "HTTP 500")


def test_an_endpoint_that_is_down_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{unused_port()}/webhooks/rest/webhook"
    out = tmp_path / "down"
    argv = ["run", "bargain", *IDS, "--labeller", "agent", "--out", str(out), "--quiet",
            "--labeller-url", url, "--channel", "rasa-rest"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert url in err and "cannot reach the agent" in err and "Traceback" not in err
    assert {r["outcome"] for r in _episodes(out)} == {"infrastructure_error"}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--labeller", "gold", "--channel", "plain"], "--channel is for --labeller agent"),
        (
            ["--labeller", "gold", "--labeller-url", "http://127.0.0.1:9/chat"],
            "--labeller-url is for --labeller agent",
        ),
        (["--labeller", "agent"], "pass --labeller-url URL"),
        (["--labeller", "agent", "--labeller-url", "localhost:9"], "needs an http(s) URL"),
        (
            ["--labeller", "agent", "--labeller-url", "http://127.0.0.1:9/", "--model", "m"],
            "--model is for the llm labeller",
        ),
    ],
)
def test_agent_options_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    out = tmp_path / "x"
    code = main(["run", "bargain", "--track", "craigslist", "--out", str(out), "--quiet", *argv])
    stderr = capsys.readouterr().err
    assert code == 2 and expected in stderr, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert not out.exists()
