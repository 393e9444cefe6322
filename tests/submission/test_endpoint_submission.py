"""A ClarQ seeker behind its own endpoint (a scripted agent in its own process on 127.0.0.1):
verified after the agent is gone, named self-run, and the rule provider's replies re-derived
from what the agent asked (issue 45.3-4)."""

from __future__ import annotations

from pathlib import Path

from tests.submission.helpers import archive, run, verdict_of
from todeval.backends.scripted import Script
from todeval.testing.chat_agent_server import AgentConfig, ChatAgentProcess


def test_an_endpoint_agent_is_self_run(tmp_path: Path) -> None:
    asks = Script.model_validate(
        {"rules": [{"match": r"what can help you\?\Z", "reply": "How do I complete my task?"}],
         "default": "Goodbye"}
    )  # fmt: skip
    with ChatAgentProcess(AgentConfig(script=asks)) as agent:
        config = {"seeker": "agent", "seeker_url": agent.url("openai-chat"), "limit": 3}
        out = run("clarq", config, tmp_path / "run")
    verdict = verdict_of(archive(out, tmp_path / "agent.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert verdict.channel == "endpoint"
    assert any(line.startswith("trust: self-run") for line in verdict.lines())
    assert any("rule provider re-derived" in line for line in verdict.checked)
