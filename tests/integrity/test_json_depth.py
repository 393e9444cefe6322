"""Finding 1 of issue 16: JSON nested ~1,000 deep is a format violation or bad input, never a
``RecursionError`` (an infrastructure error that excluded the model from every metric)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from todeval.backends import Script, make_backend
from todeval.backends.scripted import ScriptedReply, ScriptedToolCall
from todeval.backends.text_tools import parse_tool_reply
from todeval.benchmarks.booking.game import play_episode
from todeval.benchmarks.booking.llm_systems.monolithic import MonolithicSystem
from todeval.cli import main
from todeval.core import safejson
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.dialogue.replies import ReplyChecker
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

from ..booking.scripted import ScriptedUser
from ..booking.test_llm_systems_support import TASK, USER_LINES, options


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [65, 900, 1000, 100_000])
def test_loads_refuses_deep_documents_with_a_decode_error(depth: int) -> None:
    with pytest.raises(json.JSONDecodeError, match="nested deeper than 64 levels"):
        safejson.loads('{"a": ' + nested(depth) + "}")


def test_loads_accepts_the_limit_and_ignores_brackets_in_strings() -> None:
    assert safejson.loads(nested(safejson.MAX_JSON_DEPTH)) is not None
    text = json.dumps({"s": "[" * 5000 + '\\"{' * 100, "t": ["]]]"]})
    assert safejson.loads(text) == json.loads(text)
    with pytest.raises(json.JSONDecodeError) as caught:
        safejson.loads("[" * 70 + '"unterminated')  # malformed, not deep: the parser's message
    assert not isinstance(caught.value, safejson.JsonDepthError)


def test_check_depth_of_parsed_values() -> None:
    safejson.check_depth(json.loads(nested(64)))
    with pytest.raises(safejson.JsonDepthError):
        safejson.check_depth(json.loads(nested(65)))


def test_reply_checker_and_text_tools_never_raise() -> None:
    checker = ReplyChecker({"type": "object"})
    checked = checker.check('{"a": ' + nested(1000) + "}")
    assert checked.value is None and checked.error is not None
    assert "nested deeper than 64" in checked.error
    deep_call = '{"tool": "followup", "arguments": {"message": ' + nested(900) + "}}"
    assert parse_tool_reply(deep_call) == []


async def _episode(base_url: str) -> EpisodeRecord:
    backend = make_backend(f"openai:scripted@{base_url}")
    try:
        system = MonolithicSystem.from_options(options(backend))
        return await play_episode(TASK, system, ScriptedUser(list(USER_LINES)), run_seed=0)
    finally:
        await backend.aclose()


@pytest.mark.parametrize("depth", [900, 1000])
def test_deep_tool_call_arguments_over_http_are_a_format_violation(depth: int) -> None:
    arguments = '{"message": ' + nested(depth) + "}"
    call = ScriptedToolCall(name="followup", arguments=arguments)
    config = ServerConfig(script=Script(replies=[ScriptedReply(tool_calls=[call])]))
    with ServerProcess(config) as server:
        record = asyncio.run(_episode(server.base_url))
    assert record.outcome is Outcome.ABORTED, record.reason
    assert record.metrics["booking.format_violations"] == 1.0
    assert record.reason is not None and "arguments nested deeper than 64 levels" in record.reason
    EpisodeRecord.model_validate_json(record.model_dump_json())  # the record round-trips


@pytest.mark.parametrize("scorer", ["multiwoz", "incar"])
@pytest.mark.parametrize("depth", [900, 1000])
def test_deep_prediction_file_exits_3_with_one_line(
    scorer: str, depth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pred.json"
    path.write_text('{"x": ' + nested(depth) + "}", encoding="utf-8")
    assert main(["score", scorer, str(path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err == f"todeval: error: {path}: not accepted: JSON nested deeper than 64 levels\n"
