"""Mutated model replies through the real test server (issue 16, findings 1 and 3): every one
ends the episode as a recorded format violation (or a scored dialogue), never as an
infrastructure error, and the record can always be written and read back."""

from __future__ import annotations

import asyncio
import json

import pytest

from todeval.backends import Script
from todeval.backends.scripted import ScriptedReply, ScriptedToolCall
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

from .test_json_depth import _episode, nested

ARGUMENTS = {
    "nan": '{"message": NaN}',
    "infinity": '{"message": -Infinity}',
    "overflow": '{"message": 1e999}',
    "array": "[1, 2]",
    "string": '"book it"',
    "wrong type": '{"message": {"text": "hi"}}',
    "deep": '{"message": ' + nested(1000) + "}",
    "deep object": '{"message": "x", "extra": ' + '{"a":' * 900 + "1" + "}" * 900 + "}",
    "truncated": '{"message": "hel',
    "lone surrogate": '{"message": "\\ud800 hello"}',
    "huge string": json.dumps({"message": "x" * 300_000}),
}


def _record(reply: ScriptedReply) -> EpisodeRecord:
    with ServerProcess(ServerConfig(script=Script(replies=[reply]))) as server:
        return asyncio.run(_episode(server.base_url))


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_mutated_tool_call_arguments(name: str) -> None:
    call = ScriptedToolCall(name="followup", arguments=ARGUMENTS[name])
    record = _record(ScriptedReply(tool_calls=[call]))
    assert record.outcome is not Outcome.INFRASTRUCTURE_ERROR, record.reason
    if name not in ("lone surrogate", "huge string"):  # those two are valid follow-ups
        assert record.outcome is Outcome.ABORTED, record.reason
        assert record.metrics["booking.format_violations"] == 1.0
    line = record.model_dump_json()
    assert EpisodeRecord.model_validate_json(line).metrics == record.metrics


def test_lone_surrogate_in_reply_text_is_a_format_violation() -> None:
    message = {"role": "assistant", "content": "\ud800 hello"}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    body = json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]})
    record = _record(ScriptedReply(raw_body=body))
    assert record.outcome is Outcome.ABORTED, record.reason
    assert "no tool call" in record.reason
    EpisodeRecord.model_validate_json(record.model_dump_json())
