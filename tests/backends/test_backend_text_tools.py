"""The text tool protocol: prompts, parsing, constraint schemas."""

from __future__ import annotations

import json

import jsonschema

from tests.backends.backend_helpers import FOLLOWUP_TOOL, LOOKUP_TOOL
from todeval.backends import ChatMessage, ToolCallOut, limit_string_lengths, parse_tool_reply
from todeval.backends.text_tools import to_text_messages, tool_call_schema


def test_parse_plain_fenced_and_prefixed_replies() -> None:
    for text in (
        '{"tool": "followup", "arguments": {"message": "hi"}}',
        'Sure!\n```json\n{"tool": "followup", "arguments": {"message": "hi"}}\n```',
        'I will call it: {"name": "followup", "parameters": {"message": "hi"}} ok',
    ):
        calls = parse_tool_reply(text)
        assert [c.name for c in calls] == ["followup"], text
        assert json.loads(calls[0].arguments) == {"message": "hi"}


def test_parse_list_and_string_arguments() -> None:
    calls = parse_tool_reply('[{"tool": "a", "arguments": "{bad"}, {"tool": "b"}]')
    assert [(c.name, c.arguments) for c in calls] == [("a", "{bad"), ("b", "{}")]
    assert calls[0].id != calls[1].id


def test_non_tool_replies_give_no_calls() -> None:
    assert parse_tool_reply("Hello there") == []
    assert parse_tool_reply('{"message": "no tool key"}') == []
    assert parse_tool_reply('{"tool": "followup", "arguments": {"message": ') == []


def test_history_is_rewritten_as_plain_messages() -> None:
    call = ToolCallOut(id="c1", name="lookup", arguments='{"area": "north"}')
    messages = [
        ChatMessage(role="system", content="You book hotels."),
        ChatMessage(role="user", content="find one"),
        ChatMessage(role="assistant", tool_calls=[call]),
        ChatMessage(role="tool", tool_call_id="c1", content="3 rows"),
    ]
    out = to_text_messages(messages, [FOLLOWUP_TOOL, LOOKUP_TOOL], None)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"].startswith("You book hotels.")
    assert "followup" in out[0]["content"] and '"tool": "<tool name>"' in out[0]["content"]
    assert json.loads(out[2]["content"]) == {"tool": "lookup", "arguments": {"area": "north"}}
    assert out[3]["content"] == "Result of lookup: 3 rows"


def test_tool_call_schema_accepts_exactly_valid_calls() -> None:
    schema = tool_call_schema([FOLLOWUP_TOOL, LOOKUP_TOOL])
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"tool": "followup", "arguments": {"message": "x"}})
    assert validator.is_valid({"tool": "lookup", "arguments": {"area": "south"}})
    assert not validator.is_valid({"tool": "lookup", "arguments": {"area": "east"}})
    assert not validator.is_valid({"tool": "other", "arguments": {}})
    forced = tool_call_schema(
        [FOLLOWUP_TOOL, LOOKUP_TOOL], {"type": "function", "function": {"name": "lookup"}}
    )
    assert forced["properties"]["tool"] == {"const": "lookup"}


def test_free_strings_get_a_length_limit() -> None:
    schema = limit_string_lengths(tool_call_schema([FOLLOWUP_TOOL, LOOKUP_TOOL]), 50)
    followup, lookup = schema["anyOf"]
    assert followup["properties"]["arguments"]["properties"]["message"]["maxLength"] == 50
    assert "maxLength" not in lookup["properties"]["arguments"]["properties"]["area"]
    assert "maxLength" not in FOLLOWUP_TOOL["function"]["parameters"]["properties"]["message"]
