"""modular-prog and modular-llm, driven through the real game master with scripted models."""

from __future__ import annotations

import json
import re
from typing import Any

from todeval.backends.scripted import ScriptedBackend, ScriptedReply
from todeval.backends.types import GenerationRequest
from todeval.benchmarks.booking.game import GameRules
from todeval.benchmarks.booking.llm_systems import prompts
from todeval.benchmarks.booking.llm_systems.modular_llm import MAX_HOPS, ModularLLMSystem
from todeval.benchmarks.booking.llm_systems.modular_prog import ModularProgSystem
from todeval.benchmarks.booking.llm_systems.modules import INTENT_SCHEMA, slot_schema
from todeval.core.outcome import Outcome

from .test_llm_systems_support import (
    BOOKING,
    Recorder,
    as_json,
    assert_well_formed_history,
    events,
    model_info,
    options,
    play,
    sequence,
    text,
    tool,
)


def _module(request: GenerationRequest) -> str:
    prompt = request.messages[0].content or ""
    if prompt == prompts.default_prompts().render("intent"):
        return "intent"
    if prompt == prompts.default_prompts().render("followup"):
        return "followup"
    assert prompt.startswith("You extract the"), prompt
    return "slots"


def _latest_user_line(content: str) -> str:
    lines = [line for line in content.splitlines() if line.startswith("user: ")]
    return lines[-1] if lines else content


def good_modules(request: GenerationRequest) -> ScriptedReply:
    """A competent module model for test task 0 (keyword rules, JSON replies)."""
    content = request.messages[-1].content or ""
    module = _module(request)
    if module == "intent":
        latest = _latest_user_line(content)
        intent = "booking-request" if "book" in latest else "dbretrieval-request"
        return as_json({"intent": intent, "domain": "hotel"})
    if module == "slots":
        slots: dict[str, Any] = {"name": None}
        if "city centre north b and b" in content:
            slots["name"] = "city centre north b and b"
        for key, pattern in (("people", r"(\d) person"), ("stay", r"(\d) nights")):
            found = re.search(pattern, content)
            if found:
                slots[key] = found.group(1)
        if "friday" in content:
            slots["day"] = "friday"
        return as_json(slots)
    reference = re.search(r"reference number ([A-Z0-9]{6})", content)
    if reference:
        return as_json({"message": f"Done! Your reference number is {reference.group(1)}."})
    return as_json({"message": "I found city centre north b and b. Shall I book it?"})


def unused(request: GenerationRequest) -> str:
    raise AssertionError("the main model must not be called by modular-prog")


# -- modular-prog -----------------------------------------------------------------------------


def test_modular_prog_good_modules_book_task_0() -> None:
    modules = Recorder(good_modules, name="modules")
    main = ScriptedBackend(model_info("main"), unused)
    system = ModularProgSystem.from_options(options(main, modules.backend))
    record = play(system)
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert events(record, "db_query")[0]["arguments"] == {"name": "city centre north b and b"}
    (booking,) = events(record, "booking_request")
    assert booking["arguments"] == BOOKING  # row values + booking details + contact attributes
    assert {role: u.calls for role, u in record.usage.items()} == {
        "system.followup": 2,
        "system.intent": 2,
        "system.slots": 2,
    }
    messages = [e["text"] for e in events(record, "system_message")]
    assert re.fullmatch(r"Done! Your reference number is [A-Z0-9]{6}\.", messages[-1])
    # unconstrained: the schema is in the prompt, not sent to the backend
    assert all(r.response_schema is None and r.tools is None for r in modules.requests)


def test_modular_prog_uses_main_model_without_module_model() -> None:
    modules = Recorder(good_modules)
    record = play(ModularProgSystem.from_options(options(modules.backend)))
    assert record.metrics["booking.booking_accuracy"] == 1.0


def test_modular_prog_constrained_sends_module_schemas() -> None:
    modules = Recorder(good_modules)
    play(ModularProgSystem.from_options(options(modules.backend, constrained=True)))
    schemas = [r.response_schema for r in modules.requests]
    assert INTENT_SCHEMA in schemas and slot_schema("test", "hotel") in schemas
    assert all(s is not None for s in schemas)


def test_modular_prog_malformed_intent_is_a_violation() -> None:
    def model(request: GenerationRequest) -> ScriptedReply:
        if _module(request) == "intent":
            return text("The user wants a hotel.")
        return good_modules(request)

    record = play(ModularProgSystem.from_options(options(Recorder(model).backend)))
    assert record.outcome is Outcome.ABORTED
    (violation,) = record.details["violations"]
    assert violation["reason"] == "no tool call"
    assert violation["raw"].startswith("[system.intent: not JSON")
    assert violation["raw"].endswith("The user wants a hotel.")
    assert record.usage["system.intent"].calls == 1


def test_modular_prog_slot_value_outside_schema_is_a_violation() -> None:
    def model(request: GenerationRequest) -> ScriptedReply:
        if _module(request) == "slots":
            return as_json({"name": "city centre north b and b", "stars": "six"})
        return good_modules(request)

    record = play(ModularProgSystem.from_options(options(Recorder(model).backend)))
    assert record.outcome is Outcome.ABORTED
    assert record.details["violations"][0]["raw"].startswith("[system.slots: schema violation")
    assert not events(record, "db_query")


def test_modular_prog_asks_for_missing_booking_details() -> None:
    lines = ["Please book the hotel called city centre north b and b."]
    modules = Recorder(good_modules)
    record = play(ModularProgSystem.from_options(options(modules.backend)), lines)
    assert not events(record, "booking_request")
    assert len(events(record, "db_query")) == 1
    last_followup = modules.requests[-1].messages[-1].content or ""
    assert "people, day, stay" in last_followup


# -- modular-llm ------------------------------------------------------------------------------

DM_GOOD = [
    tool("callmodule", {"module": "intent", "input": "hotel called city centre north b and b"}),
    tool(
        "callmodule", {"module": "slots", "input": "city centre north b and b", "domain": "hotel"}
    ),
    tool("retrievefromhoteldb", {"name": "city centre north b and b"}),
    tool("followup", {"message": "Found it. For how many people, which day, how many nights?"}),
    tool("validatehotelbooking", BOOKING),
    tool("followup", {"message": "Booked."}),
]


def test_modular_llm_good_model_books_task_0() -> None:
    dm = Recorder(sequence(DM_GOOD), name="dm")
    modules = Recorder(good_modules, name="modules")
    system = ModularLLMSystem.from_options(options(dm.backend, modules.backend))
    record = play(system)
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert {role: u.calls for role, u in record.usage.items()} == {
        "system": 6,
        "system.intent": 1,
        "system.slots": 1,
    }
    names = [t["function"]["name"] for t in dm.requests[0].tools or []]
    assert len(names) == 8 and names[-1] == "callmodule"
    history = dm.requests[-1].messages
    assert_well_formed_history(history)
    assert json.loads(history[3].content or "") == {
        "intent": "dbretrieval-request",
        "domain": "hotel",
    }
    assert json.loads(history[5].content or "") == {"name": "city centre north b and b"}


def test_modular_llm_hop_cap_is_a_violation() -> None:
    route = tool("callmodule", {"module": "intent", "input": "hello"})
    dm = Recorder(sequence([route]))
    modules = Recorder(good_modules)
    record = play(ModularLLMSystem.from_options(options(dm.backend, modules.backend)))
    assert record.outcome is Outcome.ABORTED
    assert len(modules.requests) == MAX_HOPS == 10
    assert len(dm.requests) == MAX_HOPS + 1
    (violation,) = record.details["violations"]
    assert violation["raw"].startswith("routing cap: more than 10 module calls")
    assert record.usage["system"].calls == 11 and record.usage["system.intent"].calls == 10


def test_modular_llm_hops_reset_each_user_turn() -> None:
    route = tool("callmodule", {"module": "intent", "input": "x"})
    turn1 = [route] * 5 + [tool("retrievefromhoteldb", {"name": "city centre north b and b"})]
    turn1 += [route] * 4 + [tool("followup", {"message": "found it"})]
    turn2 = [route] * 9 + [
        tool("validatehotelbooking", BOOKING),
        tool("followup", {"message": "ok"}),
    ]
    dm = Recorder(sequence(turn1 + turn2))
    modules = Recorder(good_modules)
    record = play(ModularLLMSystem.from_options(options(dm.backend, modules.backend)))
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert len(modules.requests) == 18


def test_modular_llm_bad_router_arguments_return_an_error_to_the_dm() -> None:
    replies = [tool("callmodule", {"module": "weather", "input": "x"}), *DM_GOOD[2:]]
    dm = Recorder(sequence(replies))
    modules = Recorder(good_modules)
    record = play(ModularLLMSystem.from_options(options(dm.backend, modules.backend)))
    assert record.outcome is Outcome.SUCCESS
    assert not modules.requests
    answer = dm.requests[1].messages[-1]
    assert answer.role == "tool" and (answer.content or "").startswith("Error: invalid arguments")


def test_modular_llm_unusable_module_reply_goes_back_to_the_dm() -> None:
    dm = Recorder(sequence(DM_GOOD))
    modules = Recorder(lambda request: text("no idea"))
    record = play(ModularLLMSystem.from_options(options(dm.backend, modules.backend)))
    assert record.outcome is Outcome.SUCCESS
    answer = dm.requests[1].messages[-1].content or ""
    assert answer.startswith("The module's reply was unusable (not JSON")


def test_modular_llm_final_text_is_a_violation() -> None:
    dm = Recorder(sequence([DM_GOOD[0], text("I think you want a hotel.")]))
    record = play(
        ModularLLMSystem.from_options(options(dm.backend, Recorder(good_modules).backend))
    )
    assert record.outcome is Outcome.ABORTED
    assert record.details["violations"][0]["raw"] == "I think you want a hotel."


def test_modular_llm_reprompt_after_hop_cap() -> None:
    route = tool("callmodule", {"module": "intent", "input": "x"})
    dm = Recorder(sequence([route] * 11 + DM_GOOD[2:]))
    rules = GameRules(on_violation="reprompt")
    record = play(
        ModularLLMSystem.from_options(options(dm.backend, Recorder(good_modules).backend)),
        rules=rules,
    )
    assert record.metrics["booking.format_violations"] == 1.0
    assert record.outcome is Outcome.SUCCESS
    assert_well_formed_history(dm.requests[-1].messages)
