"""The monolithic LLM system, driven through the real game master with scripted models."""

from __future__ import annotations

import asyncio
import json

import pytest

from todeval.backends.errors import InfrastructureError
from todeval.backends.scripted import ScriptedBackend
from todeval.backends.types import GenerationRequest
from todeval.benchmarks.booking.game import GameRules
from todeval.benchmarks.booking.llm_systems import LLM_SYSTEMS
from todeval.benchmarks.booking.llm_systems.monolithic import MonolithicSystem
from todeval.benchmarks.booking.messages import (
    BookingSystem,
    DbResult,
    UserMessage,
)
from todeval.benchmarks.booking.players import SYSTEM
from todeval.core.outcome import Outcome
from todeval.dialogue.participants import PlayerOptions
from todeval.errors import UsageError

from .test_llm_systems_support import (
    BOOKING,
    USER_LINES,
    Recorder,
    assert_well_formed_history,
    context,
    events,
    model_info,
    options,
    play,
    sequence,
    text,
    tool,
)

GOOD = [
    tool("retrievefromhoteldb", {"name": "city centre north b and b"}),
    tool("followup", {"message": "I found it. How many people, which day, how many nights?"}),
    tool("validatehotelbooking", BOOKING),
    tool("followup", {"message": "Booked."}),
]


def monolithic(recorder: Recorder, *, constrained: bool = False) -> MonolithicSystem:
    return MonolithicSystem.from_options(options(recorder.backend, constrained=constrained))


def test_llm_systems_mapping_resolves_to_booking_systems() -> None:
    assert set(LLM_SYSTEMS) == {
        "monolithic",
        "modular-prog",
        "modular-llm",
        "autotod",
        "hd-pipeline",
        "hd-pipeline-zeroshot",
        "http",
        "agent",
    }
    for name, reference in LLM_SYSTEMS.items():
        factory = SYSTEM.resolve(reference)
        assert callable(getattr(factory.cls, "from_options", None)), name
    model = Recorder(sequence(GOOD)).backend
    for name in ("monolithic", "modular-prog", "modular-llm", "autotod", "hd-pipeline"):
        system = SYSTEM.resolve(LLM_SYSTEMS[name]).build(options(model))
        assert isinstance(system, BookingSystem)


@pytest.mark.parametrize(
    "name", ["monolithic", "modular-prog", "modular-llm", "autotod", "hd-pipeline"]
)
def test_missing_model_is_a_usage_error(name: str) -> None:
    factory = SYSTEM.resolve(LLM_SYSTEMS[name])
    with pytest.raises(UsageError, match="--system-model"):
        factory.build(PlayerOptions(role="system"))


def test_good_model_books_task_0() -> None:
    recorder = Recorder(sequence(GOOD))
    system = monolithic(recorder)
    record = play(system)
    assert record.outcome is Outcome.SUCCESS
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert record.metrics["booking.format_violations"] == 0.0
    assert events(record, "db_query")[0]["arguments"] == {"name": "city centre north b and b"}
    # usage of every call lands in the record under the role "system"
    assert list(record.usage) == ["system"]
    assert record.usage["system"].calls == 4
    assert record.usage["system"].prompt_tokens == 400
    assert record.usage["system"].completion_tokens == 40
    # the model got the seven tools, unconstrained, with the episode's seed
    first = recorder.requests[0]
    assert [t["function"]["name"] for t in first.tools or []] == [
        t["function"]["name"] for t in context().tools
    ]
    assert first.constrained is False and first.seed is not None
    assert first.max_tokens == 200


def test_history_holds_results_as_tool_messages() -> None:
    recorder = Recorder(sequence(GOOD))
    record = play(monolithic(recorder))
    assert record.outcome is Outcome.SUCCESS
    last = recorder.requests[-1].messages
    assert_well_formed_history(last)
    roles = [m.role for m in last]
    assert roles == [
        "system", "user", "assistant", "tool", "assistant", "tool", "user",
        "assistant", "tool",
    ]  # fmt: skip
    db_answer = json.loads(last[3].content or "")
    assert db_answer["total"] == 1
    assert db_answer["rows"][0]["name"] == "city centre north b and b"
    assert (last[3].content or "").startswith('{"total":1,"rows":[{')  # compact JSON
    booking_answer = json.loads(last[8].content or "")
    assert booking_answer["ok"] is True and len(booking_answer["reference"]) == 6
    assert last[6].content == "Please book it for 1 person for 5 nights starting from friday."


def test_reply_without_tool_call_is_a_recorded_violation_and_abort() -> None:
    recorder = Recorder(sequence([text("Sure, I can help you with that!")]))
    record = play(monolithic(recorder))
    assert record.outcome is Outcome.ABORTED
    (violation,) = record.details["violations"]
    assert violation["reason"] == "no tool call"
    assert violation["raw"] == "Sure, I can help you with that!"
    assert record.usage["system"].calls == 1  # the bad call is accounted too


def test_invalid_arguments_are_a_violation_with_raw_text_kept() -> None:
    broken = '{"name": "city centre north b and b", "stars": {"operator": ">=", '
    recorder = Recorder(sequence([tool("retrievefromhoteldb", broken)]))
    record = play(monolithic(recorder))
    assert record.outcome is Outcome.ABORTED
    (violation,) = record.details["violations"]
    assert violation["reason"].startswith("arguments are not valid JSON")
    assert violation["raw"] == f"retrievefromhoteldb({broken})"


def test_schema_violation_in_booking_aborts() -> None:
    bad = {**BOOKING, "stay": "five"}
    recorder = Recorder(sequence([tool("validatehotelbooking", bad)]))
    record = play(monolithic(recorder))
    assert record.outcome is Outcome.ABORTED
    assert "stay" in record.details["violations"][0]["reason"]
    assert record.metrics["booking.booking_accuracy"] == 0.0


def test_only_the_first_tool_call_is_acted_on() -> None:
    from todeval.backends.scripted import ScriptedReply, ScriptedToolCall

    double = ScriptedReply(
        tool_calls=[
            ScriptedToolCall(name="retrievefromhoteldb", arguments={"area": "north"}),
            ScriptedToolCall(name="followup", arguments={"message": "never sent"}),
        ]
    )
    recorder = Recorder(sequence([double, *GOOD[1:]]))
    record = play(monolithic(recorder))
    assert events(record, "db_query")[0]["arguments"] == {"area": "north"}
    assert_well_formed_history(recorder.requests[-1].messages)


def test_reprompt_sends_the_violation_back_to_the_model() -> None:
    replies = [text("Let me look that up."), *GOOD]
    recorder = Recorder(sequence(replies))
    record = play(monolithic(recorder), rules=GameRules(on_violation="reprompt"))
    assert record.metrics["booking.format_violations"] == 1.0
    assert record.outcome is Outcome.SUCCESS
    notice = recorder.requests[1].messages[-1]
    assert notice.role == "user" and "not a valid action (no tool call)" in (notice.content or "")
    assert_well_formed_history(recorder.requests[-1].messages)


def test_constrained_is_passed_to_the_backend() -> None:
    recorder = Recorder(sequence(GOOD))
    play(monolithic(recorder, constrained=True))
    assert all(r.constrained and r.tools for r in recorder.requests)


def test_infrastructure_error_propagates_and_is_recorded() -> None:
    def down(request: GenerationRequest) -> str:
        raise InfrastructureError("server down", kind="connection")

    system = MonolithicSystem.from_options(options(ScriptedBackend(model_info(), down)))

    async def respond() -> None:
        await system.start(context())
        await system.respond(UserMessage(text="hello"))

    with pytest.raises(InfrastructureError):
        asyncio.run(respond())
    record = play(MonolithicSystem.from_options(options(ScriptedBackend(model_info(), down))))
    assert record.outcome is Outcome.INFRASTRUCTURE_ERROR


def test_result_without_open_call_goes_in_as_user_message() -> None:
    recorder = Recorder(sequence([text("hello")]))
    system = monolithic(recorder)

    async def run() -> None:
        await system.start(context())
        await system.respond(UserMessage(text="hi"))
        result = DbResult(domain="hotel", query={}, rows=[], total=0, message="none")
        await system.respond(result)

    asyncio.run(run())
    assert recorder.requests[-1].messages[-1].role == "user"


def test_repeated_tool_call_ids_are_made_unique() -> None:
    from todeval.backends.scripted import ScriptedReply, ScriptedToolCall

    def same_id(name: str, arguments: dict[str, str]) -> ScriptedReply:
        return ScriptedReply(tool_calls=[ScriptedToolCall(id="c", name=name, arguments=arguments)])

    replies = [
        same_id("retrievefromhoteldb", {"area": "north"}),
        same_id("retrievefromhoteldb", {"name": "city centre north b and b"}),
        same_id("followup", {"message": "found it"}),
    ]
    recorder = Recorder(sequence(replies))
    play(monolithic(recorder), USER_LINES[:1])
    history = recorder.requests[-1].messages
    ids = [m.tool_calls[0].id for m in history if m.tool_calls]
    assert len(ids) == len(set(ids)) == 2
    assert_well_formed_history(history)
