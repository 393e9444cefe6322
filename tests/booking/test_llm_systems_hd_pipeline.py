"""hd-pipeline (Hudeček & Dušek 2023) through the real game master: a scripted model that
answers each role by parsing its prompt, the BM25 few-shot retrieval, the OpenAI-compatible test
server (a real process, regex rules) and panels through the CLI."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from todeval.backends import Script, make_backend
from todeval.backends.scripted import ScriptedReply
from todeval.backends.types import GenerationRequest
from todeval.benchmarks.booking.game import play_episode
from todeval.benchmarks.booking.llm_systems import LLM_SYSTEMS
from todeval.benchmarks.booking.llm_systems.bm25 import (
    BM25,
    default_retriever,
    tokens,
    validation_examples,
)
from todeval.benchmarks.booking.llm_systems.hd_pipeline import (
    DOMAIN_SCHEMA,
    HDPipelineSystem,
)
from todeval.benchmarks.booking.llm_systems.modules import slot_schema
from todeval.benchmarks.booking.messages import (
    BookingResult,
    DbResult,
    SystemOutput,
    UserContext,
    UserMessage,
    UserReply,
)
from todeval.benchmarks.booking.players import SYSTEM, SYSTEMS
from todeval.cli import main
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

from .scripted import ScriptedUser
from .test_llm_systems_support import (
    BOOKING,
    TASK,
    USER_LINES,
    Recorder,
    as_json,
    context,
    events,
    options,
    play,
    text,
)

ROOT = Path(__file__).resolve().parents[2]
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _role(request: GenerationRequest) -> str:
    prompt = request.messages[0].content or ""
    if prompt.startswith("You are the domain detector"):
        return "domain"
    if re.match(r"You are the \w+ state tracker", prompt):
        return "state"
    assert prompt.startswith("You are the assistant"), prompt
    return "response"


def _dialogue_users(content: str) -> list[str]:
    """The user lines of the dialogue quoted in a prompt (not the few-shot examples)."""
    return [line[6:] for line in content.splitlines() if line.startswith("user: ")]


def parsing_model(request: GenerationRequest) -> ScriptedReply:
    """Answers each role by reading its prompt: keywords, regexes over the user's text, and
    the state / DB / booking lines of the response prompt."""
    content = request.messages[-1].content or ""
    role = _role(request)
    users = _dialogue_users(content)
    if role == "domain":
        latest = users[-1].lower()
        for domain, words in (
            ("hotel", ("hotel", "guesthouse", "b and b", "nights", "stay")),
            ("restaurant", ("restaurant", "food", "table", "eat")),
            ("train", ("train", "leave", "arrive")),
        ):
            if any(w in latest for w in words):
                return as_json({"domain": domain})
        return as_json({"domain": "none"})
    if role == "state":
        said = " ".join(users).lower()
        state: dict[str, str] = {}
        named = re.search(r"called ([a-z0-9' ]+?)[.,!?]", said)
        if named:
            state["name"] = named.group(1)
        for key, pattern in (("people", r"(\d+) (?:person|people)"), ("stay", r"(\d+) nights?")):
            mentions = re.findall(pattern, said)
            if mentions:
                state[key] = mentions[-1]  # the latest mention wins
        days = re.findall("|".join(_DAYS), said)
        if days:
            state["day"] = days[-1]
        return as_json(state)
    reference = re.search(r"^Booking: booked, reference number (\w+)$", content, re.M)
    if reference:
        return text(f"Booked! Your reference number is {reference.group(1)}.")
    found = re.search(r"^Database: (\d+) match\(es\); first rows: (.*)$", content, re.M)
    missing = re.search(r"^Booking details missing: (.*)$", content, re.M)
    if found:
        rows: list[dict[str, Any]] = json.loads(found.group(2))
        names = ", ".join(r.get("name", "?") for r in rows)
        ask = f" To book, tell me: {missing.group(1)}." if missing else ""
        return text(f"I found {found.group(1)}: {names}.{ask}")
    return text("What are you looking for: a restaurant, a hotel or a train?")


def _calls(record: EpisodeRecord) -> dict[str, int]:
    return {role: u.calls for role, u in record.usage.items()}


def test_registered_as_a_builtin_system() -> None:
    assert LLM_SYSTEMS["hd-pipeline"] == SYSTEMS["hd-pipeline"]
    assert SYSTEMS["hd-pipeline"].endswith("hd_pipeline:HDPipelineSystem")


def test_parsing_model_books_task_0_with_per_role_calls() -> None:
    model = Recorder(parsing_model)
    record = play(HDPipelineSystem.from_options(options(model.backend)))
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert events(record, "db_query")[0]["arguments"] == {"name": "city centre north b and b"}
    (booking,) = events(record, "booking_request")
    assert booking["arguments"] == BOOKING
    assert _calls(record) == {"system.domain": 2, "system.state": 2, "system.response": 2}
    messages = [e["text"] for e in events(record, "system_message")]
    assert messages[0] == (
        "I found 1: city centre north b and b. To book, tell me: people, day, stay."
    )
    assert re.fullmatch(r"Booked! Your reference number is [A-Z0-9]{6,8}\.", messages[-1])
    # few-shot examples (default 2) are in the instructions, retrieved from validation turns
    state_prompts = [r.messages[0].content or "" for r in model.requests if _role(r) == "state"]
    assert all("Examples (a user message and the state after it):" in p for p in state_prompts)
    assert all(r.response_schema is None for r in model.requests)  # unconstrained


def test_parsing_model_under_the_default_protocol() -> None:
    from todeval.benchmarks.booking.game import GameRules

    model = Recorder(parsing_model)
    record = play(
        HDPipelineSystem.from_options(options(model.backend)), rules=GameRules(protocol="clemtodd")
    )
    assert record.outcome is Outcome.SUCCESS, record.reason


@pytest.mark.parametrize("name", ["hd-pipeline", "hd-pipeline-zeroshot"])
def test_few_shot_zero_disables_examples(name: str) -> None:
    model = Recorder(parsing_model)
    extra: dict[str, Any] = {"few_shot": 0} if name == "hd-pipeline" else {}
    system = SYSTEM.resolve(name).build(options(model.backend, **extra))
    record = play(system)
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert _calls(record) == {"system.domain": 2, "system.state": 2, "system.response": 2}
    for request in model.requests:
        assert "Example" not in (request.messages[0].content or "")


def test_few_shot_count_is_checked() -> None:
    model = Recorder(parsing_model).backend
    with pytest.raises(ValueError, match="few_shot"):
        HDPipelineSystem.from_options(options(model, few_shot=-1))
    system = HDPipelineSystem.from_options(options(model, few_shot=3))
    record = play(system)
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert system.few_shot == 3 and len(system.examples) <= 3


def test_constrained_sends_role_schemas() -> None:
    model = Recorder(parsing_model)
    play(HDPipelineSystem.from_options(options(model.backend, constrained=True)))
    schemas = [r.response_schema for r in model.requests]
    assert DOMAIN_SCHEMA in schemas and slot_schema("test", "hotel") in schemas
    assert schemas.count(None) == 2  # the responses are free text


def test_malformed_domain_reply_is_a_violation() -> None:
    def model(request: GenerationRequest) -> ScriptedReply:
        if _role(request) == "domain":
            return text("It is about a hotel.")
        return parsing_model(request)

    record = play(HDPipelineSystem.from_options(options(Recorder(model).backend)))
    assert record.outcome is Outcome.ABORTED
    (violation,) = record.details["violations"]
    assert violation["reason"] == "no tool call"
    assert violation["raw"].startswith("[system.domain: not JSON")
    assert _calls(record) == {"system.domain": 1}


def test_a_failed_booking_is_not_retried_with_the_same_state() -> None:
    model = Recorder(parsing_model)
    system = HDPipelineSystem.from_options(options(model.backend, few_shot=0))
    line = (
        "I want the hotel called city centre north b and b for 1 person for 5 nights from friday."
    )

    async def steps() -> list[SystemOutput]:
        await system.start(context())
        first = await system.respond(UserMessage(text=line))
        rows = [{"name": "city centre north b and b", "area": "north"}]
        query = {"name": "city centre north b and b"}
        db = DbResult(domain="hotel", query=query, rows=rows, total=1, message="1 match")
        booking = await system.respond(db)
        failed = BookingResult(domain="hotel", ok=False, message="no room")
        reply = await system.respond(failed)
        again = await system.respond(UserMessage(text="Please try again."))
        other = await system.respond(UserMessage(text="Then make it 4 nights from friday."))
        return [first, booking, reply, again, other]

    outputs = asyncio.run(steps())
    names = [o.tool_call.name if o.tool_call else None for o in outputs]
    assert names == [
        "retrievefromhoteldb",
        "validatehotelbooking",
        "followup",
        "followup",  # same state: no second attempt
        "validatehotelbooking",  # the state changed (4 nights): booked again
    ]
    assert "Booking: failed (no room)" in (model.requests[-3].messages[-1].content or "")


def test_bm25_ranks_and_retrieves_validation_turns() -> None:
    index = BM25([tokens("cheap hotel north"), tokens("train to ely"), tokens("hotel hotel")])
    assert index.top(tokens("train ely"), 2) == [1]
    assert index.top(tokens("hotel"), 3)[0] == 2  # more occurrences, shorter document
    examples = validation_examples()
    assert len(examples) > 500 and all(e.dialogue.endswith(".json") for e in examples)
    found = default_retriever().retrieve("I need a train to cambridge on friday", 3, "train")
    assert len(found) == 3 and all(e.domain == "train" for e in found)
    assert all("train" in e.user.lower() or "cambridge" in e.user.lower() for e in found)
    assert default_retriever().retrieve("anything", 0) == []


# -- the OpenAI-compatible test server: regex rules answer the three roles ---------------------

_STATE_FULL = (
    r"(?s)called ([a-z ]+)\..*for (\d) person for (\d) nights starting from (\w+)\."
    r".*Updated hotel state:"
)
RULES: list[dict[str, Any]] = [
    {"match": r"(?s)(hotel|nights).*Domain of the latest", "reply": '{"domain":"hotel"}'},
    {"match": r"Domain of the latest", "reply": '{"domain":"none"}'},
    {
        "match": _STATE_FULL,
        "reply": '{"name":"\\1","people":"\\2","stay":"\\3","day":"\\4"}',
        "expand": True,
    },
    {
        "match": r"(?s)called ([a-z ]+)\..*Updated hotel state:",
        "reply": '{"name":"\\1"}',
        "expand": True,
    },
    {
        "match": r"reference number (\w+)",
        "reply": "Your room is booked; the reference number is \\1.",
        "expand": True,
    },
    {
        "match": r'Database: (\d+) match.*?"name":"([^"]+)"',
        "reply": "I found \\2. For how many people, from which day and how many nights?",
        "expand": True,
    },
]


class TaskZeroUser:
    """The two scripted lines of test task 0, then ``done`` (for the CLI panel)."""

    async def start(self, context: UserContext) -> None:
        self.user = ScriptedUser(list(USER_LINES))

    async def respond(self, system_message: str | None) -> UserReply:
        return await self.user.respond(system_message)


async def _episode(base_url: str) -> EpisodeRecord:
    backend = make_backend(f"openai:scripted@{base_url}")
    try:
        system = HDPipelineSystem.from_options(options(backend))
        return await play_episode(TASK, system, ScriptedUser(list(USER_LINES)), run_seed=0)
    finally:
        await backend.aclose()


def test_over_real_http_books_task_0() -> None:
    config = ServerConfig(script=Script.model_validate({"rules": RULES}))
    with ServerProcess(config) as server:
        record = asyncio.run(_episode(server.base_url))
        bodies = [r["body"] for r in server.requests()]
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert _calls(record) == {"system.domain": 2, "system.state": 2, "system.response": 2}
    assert not record.usage["system.state"].estimated
    assert len(bodies) == 6 and all("tools" not in b for b in bodies)
    messages = [e["text"] for e in events(record, "system_message")]
    assert messages[-1].startswith("Your room is booked; the reference number is ")


def test_in_a_panel_through_the_cli(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    config = ServerConfig(script=Script.model_validate({"rules": RULES}))
    out = tmp_path / "panel"
    with ServerProcess(config) as server:
        code = main(
            [
                "run",
                "booking",
                "--systems",
                f"rule,hd-pipeline=openai:scripted@{server.base_url}",
                "--users",
                "tests.booking.test_llm_systems_hd_pipeline:TaskZeroUser",
                "--task-ids",
                TASK.task_id,
                "--protocol",
                "strict",
                "--out",
                str(out),
                "--quiet",
            ]
        )
    assert code == 0
    panel = json.loads((out / "panel.json").read_text())
    systems = panel["members"]["system"]
    assert systems[0] == "rule" and systems[1].startswith("hd-pipeline")
    run = next(rel for key, rel in panel["runs"].items() if "hd-pipeline" in key)
    summary = json.loads((out / run / "summary.json").read_text())
    assert summary["metrics"]["booking.booking_accuracy"]["micro"]["value"] == 1.0


def test_few_shot_flag_reaches_the_pipeline_and_is_refused_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from todeval.cli import main

    base = ["run", "booking", "--task-ids", "test/000-sng01936", "--quiet"]
    assert main([*base, "--few-shot", "1", "--out", str(tmp_path / "rule")]) == 2
    assert "--few-shot is for --system hd-pipeline" in capsys.readouterr().err
    assert main([*base, "--few-shot", "-1", "--out", str(tmp_path / "neg")]) == 2
