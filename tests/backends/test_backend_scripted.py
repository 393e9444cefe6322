"""The scripted backend: files, rules, positions, callables."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.backends.backend_helpers import user_request
from todeval.backends import (
    ChatMessage,
    GenerationRequest,
    ScriptedReply,
    load_script,
    make_backend,
)
from todeval.errors import BadInputError


def _conversation(n_assistant: int, last: str = "hi") -> GenerationRequest:
    messages = [ChatMessage(role="system", content="s")]
    for i in range(n_assistant):
        messages += [
            ChatMessage(role="user", content=f"u{i}"),
            ChatMessage(role="assistant", content=f"a{i}"),
        ]
    messages.append(ChatMessage(role="user", content=last))
    return GenerationRequest(messages=messages)


def test_json_script_replies_by_position_and_rules(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "rules": [{"match": "(?i)bye", "reply": "done"}],
                "replies": [
                    "first",
                    {"tool_calls": [{"name": "followup", "arguments": {"message": "m"}}]},
                ],
                "default": "after",
            }
        )
    )
    backend = make_backend(f"scripted:{path}")

    async def run() -> list[str]:
        out = []
        for n, last in ((0, "hi"), (1, "hi"), (2, "hi"), (5, "Bye now")):
            result = await backend.generate(_conversation(n, last), role="user")
            out.append(result.text or result.tool_calls[0].name)
        return out

    assert asyncio.run(run()) == ["first", "followup", "after", "done"]


def test_jsonl_script_cycles_when_no_default(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text('"a"\n\n{"text": "b", "finish_reason": "length"}\n')
    script = load_script(path)
    assert [script.select(_conversation(n).messages).text for n in range(4)] == ["a", "b", "a", "b"]
    assert script.select(_conversation(1).messages).finish == "length"


def test_replies_do_not_depend_on_concurrency(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps([f"r{i}" for i in range(5)]))
    backend = make_backend(f"scripted:{path}")

    async def run() -> list[str]:
        requests = [_conversation(i % 5) for i in range(50)]
        results = await asyncio.gather(*(backend.generate(r, role="s") for r in requests))
        return [r.text for r in results]

    assert asyncio.run(run()) == [f"r{i % 5}" for i in range(50)]


def test_callable_script_sync_and_async() -> None:
    def echo(request: GenerationRequest) -> str:
        return (request.messages[-1].content or "").upper()

    async def tool(request: GenerationRequest) -> ScriptedReply:
        return ScriptedReply.model_validate({"tool_calls": [{"name": "x", "arguments": "{}"}]})

    sync_backend = make_backend("scripted:inline", script=echo)
    async_backend = make_backend("scripted:inline", script=tool)
    assert asyncio.run(sync_backend.generate(user_request("abc"), role="u")).text == "ABC"
    result = asyncio.run(async_backend.generate(user_request(), role="u"))
    assert result.tool_calls[0].name == "x"
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("bad.json", "{", "not valid JSON"),
        ("bad2.json", '{"replies": [{"text": 3}]}', "invalid script at replies.0.text"),
    ],
)
def test_bad_script_files(tmp_path: Path, name: str, text: str, fragment: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BadInputError, match=fragment):
        load_script(path)
    with pytest.raises(BadInputError, match="cannot read script"):
        load_script(tmp_path / "absent.json")
