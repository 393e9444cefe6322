"""Typed transcript events: checked on write and read, older records read unchanged, model
calls recorded under their turn, and their text left out on request."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from todeval.backends.sampling import generate_accounted
from todeval.backends.scripted import Script, ScriptedBackend
from todeval.backends.types import ChatMessage, GenerationRequest, ModelInfo
from todeval.core.events import EVENT_TYPES, PAYLOADS, Event, ModelCallPayload, type_of_kind
from todeval.core.records import EpisodeRecord, without_call_text
from todeval.dialogue import EpisodeEnd, EpisodeLog, EpisodeStreams

ROOT = Path(__file__).resolve().parents[2]


def test_every_type_has_a_payload_and_kinds_map_as_documented() -> None:
    assert set(PAYLOADS) == set(EVENT_TYPES)
    assert type_of_kind("user_message") == "message"
    assert type_of_kind("model_call") == "model_call"
    assert type_of_kind("violation") == "violation"
    assert type_of_kind("episode_end") == "end"
    assert type_of_kind("db_query") == "extra"


@pytest.mark.parametrize(
    ("kind", "type_", "data"),
    [
        ("user_message", "message", {}),  # no text
        ("user_message", "message", {"text": 3}),
        ("db_query", "tool_call", {"domain": "hotel"}),  # no arguments
        ("violation", "violation", {"reason": "bad"}),  # no raw
        ("violation", "violation", {"reason": "bad", "raw": "", "extra": 1}),
        ("episode_end", "end", {"outcome": "success"}),
        ("model_call", "model_call", {"role": "user"}),  # no messages/reply keys
    ],
)
def test_a_payload_that_does_not_fit_its_type_is_refused(
    kind: str, type_: str, data: dict[str, object]
) -> None:
    with pytest.raises(ValidationError):
        Event.model_validate(
            {"t": 0, "kind": kind, "type": type_, "actor": "a", "turn": 1, "data": data}
        )
    log = EpisodeLog()
    with pytest.raises(ValidationError):  # on write too
        log.add_typed(kind, "a", type_, data)  # type: ignore[arg-type]


def test_records_without_types_read_with_the_derived_type() -> None:
    """Every fixture written before typed events (0.1.0 and 0.2.0 run directories) reads."""
    lines = 0
    for path in sorted((ROOT / "tests" / "fixtures").rglob("episodes.jsonl.gz")):
        for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
            raw = json.loads(line)
            record = EpisodeRecord.model_validate(raw)
            for old, new in zip(raw["events"], record.events, strict=True):
                assert new.type == old.get("type", type_of_kind(old["kind"]))
            lines += 1
    assert lines > 100


def _played(record_calls: bool = True) -> EpisodeRecord:
    info = ModelInfo(name="m", spec="scripted:m", backend="scripted", model="m")
    backend = ScriptedBackend(info, Script.model_validate({"replies": ["first", "second"]}))

    async def play() -> EpisodeRecord:
        log = EpisodeLog()
        streams = EpisodeStreams(0, "t1")
        for turn in (1, 2):
            log.turn = turn
            log.message("user", f"hello {turn}")
            request = GenerationRequest(
                messages=[ChatMessage(role="user", content=f"hello {turn}")]
            )
            result = await generate_accounted(backend, request, role="system", usage=log.usage)
            log.message("system", result.text)
        log.tool_call("db_query", "system", {"area": "north"}, domain="hotel")
        log.tool_result("db_result", "game_master", message="2 found", total=2)
        end = EpisodeEnd.success("done")
        log.finish(end)
        return log.record(benchmark="demo", streams=streams, end=end)

    record = asyncio.run(play())
    return record if record_calls else without_call_text(record)


def test_model_calls_are_events_under_their_turn_and_in_the_usage() -> None:
    record = _played()
    calls = [e for e in record.events if e.type == "model_call"]
    assert [(e.turn, e.actor) for e in calls] == [(1, "system"), (2, "system")]
    first = calls[0].payload()
    assert isinstance(first, ModelCallPayload)
    assert first.messages == [{"role": "user", "content": "hello 1"}] and first.reply == "first"
    assert record.usage["system"].calls == 2  # the accounting is unchanged
    kinds = [e.kind for e in record.events]
    assert kinds.index("model_call") == kinds.index("user_message") + 1
    assert [e.type for e in record.events if e.kind in ("db_query", "db_result")] == [
        "tool_call",
        "tool_result",
    ]
    again = EpisodeRecord.model_validate_json(record.model_dump_json())  # read back
    assert again == record


def test_without_call_text_keeps_the_accounting_only() -> None:
    record = _played(record_calls=False)
    for event in record.events:
        if event.type == "model_call":
            payload = event.payload()
            assert isinstance(payload, ModelCallPayload)
            assert payload.messages is None and payload.reply is None
            assert payload.prompt_tokens > 0
    EpisodeRecord.model_validate_json(record.model_dump_json())
    assert "hello 1" not in "".join(
        json.dumps(e.data) for e in record.events if e.type == "model_call"
    )


def test_the_run_command_records_calls_by_default_and_omits_their_text_on_request(
    tmp_path: Path,
) -> None:
    from todeval.cli import main

    script = tmp_path / "guess.json"
    script.write_text('{"default": "{\\"guess\\": 5}"}', encoding="utf-8")
    model = f"scripted:{script}"
    common = ["run", "toy", "--guesser", "llm", "--guesser-model", model, "--limit", "2"]
    assert main([*common, "--quiet", "--out", str(tmp_path / "with")]) == 0
    assert main([*common, "--quiet", "--no-record-calls", "--out", str(tmp_path / "without")]) == 0
    for name, has_text in (("with", True), ("without", False)):
        lines = (tmp_path / name / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
        calls = [
            e for line in lines for e in json.loads(line)["events"] if e["type"] == "model_call"
        ]
        assert calls
        assert all((e["data"]["reply"] == '{"guess": 5}') is has_text for e in calls)
        assert all(e["data"]["prompt_tokens"] > 0 for e in calls)


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("user_message", {"text": "hi", "queued": 1}),
        ("user_message", {"text": 3}),
        ("user_message", {}),
        ("db_result", {"message": None, "rows": []}),
        ("db_result", {"message": ["no"]}),
        ("violation", {"reason": "r", "raw": "x"}),
        ("violation", {"reason": "r", "raw": "x", "more": 1}),
        ("violation", {"reason": "r"}),
        ("episode_end", {"outcome": "success", "reason": "done", "dialogue_outcome": None}),
        ("episode_end", {"outcome": "success", "reason": "done", "dialogue_reason": 2}),
        ("episode_end", {"outcome": "success"}),
    ],
)
def test_quick_payload_check_agrees_with_the_models(kind: str, data: dict[str, Any]) -> None:
    """Events are checked in Python for plain-text payloads (reading is faster); what it
    accepts and refuses is what the payload models accept and refuse."""
    types = {"db_result": "tool_result"}
    kind_type = types.get(kind, type_of_kind(kind))
    try:
        PAYLOADS[kind_type].model_validate(data)
        valid = True
    except ValidationError:
        valid = False
    raw = {"t": 0.0, "kind": kind, "type": kind_type, "actor": "user", "turn": 1, "data": data}
    if valid:
        assert Event.model_validate(raw).data == data
    else:
        with pytest.raises(ValidationError):
            Event.model_validate(raw)
