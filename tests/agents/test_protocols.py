"""The agent's MCP tool calls are held to the run's ``--protocol`` exactly as a built-in
system's: the example agent, driven by a sloppy scripted model, sends a search with every
required key (none) but a capitalised enum value and an unknown key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import (
    HOTEL,
    AgentStack,
    agent_stack,
    booking_rules,
    events,
    eventually,
    kinds,
    make_script,
    run_agent_booking,
    text_of,
)

SLOPPY_SEARCH = {"name": HOTEL, "area": "North", "mood": 1}


@pytest.fixture(scope="module")
def sloppy_stack() -> Iterator[AgentStack]:
    """First search malformed; once told "call rejected", a well-formed one (a fresh call id:
    the Agents SDK refuses a reused one); then the booking of test task 0."""
    retry = {"name": "retrievefromhoteldb", "arguments": {"name": HOTEL}, "id": "call_retry"}
    rules = [
        {
            "match": f"by the name of {HOTEL}",
            "reply": {"tool_calls": [{"name": "retrievefromhoteldb", "arguments": SLOPPY_SEARCH}]},
        },
        {"match": "^call rejected: ", "reply": {"tool_calls": [retry]}},
        *booking_rules()[1:],
    ]
    with agent_stack(make_script(rules, "Sorry, could you say that again?")) as stack:
        yield stack


def tool_messages(stack: AgentStack, mark: int) -> list[str]:
    """The texts of the tool results the agent passed to its model since ``mark``."""
    texts: list[str] = []
    for body, _ in stack.served_since(mark):
        for message in body["messages"]:
            if message["role"] == "tool" and text_of(message) not in texts:
                texts.append(text_of(message))
    return texts


def test_strict_aborts_on_the_agents_malformed_call(
    sloppy_stack: AgentStack, tmp_path: Path
) -> None:
    mark = sloppy_stack.mark()
    run = run_agent_booking(
        tmp_path / "run", sloppy_stack.url("openai-chat"), "--protocol", "strict"
    )
    record = run.record
    assert run.exit_code == 0
    assert run.manifest["config"]["protocol"] == "strict"
    assert record["outcome"] == "aborted"
    assert record["termination"] == "format_violation"
    [violation] = events(record, "violation")
    assert violation["actor"] == "system"
    assert "mood" in violation["data"]["reason"]
    assert '"area": "North"' in violation["data"]["raw"]
    assert "db_query" not in kinds(record)  # the call was never played
    assert record["metrics"]["booking.format_violations"] == 1.0
    # the agent's call got an error answer (the episode had ended), never a DB result; the
    # agent passes it to its model after the run has returned
    texts = eventually(lambda: tool_messages(sloppy_stack, mark), bool)
    assert texts == ["the episode has ended"], texts


def test_clemtodd_plays_the_agents_malformed_call(sloppy_stack: AgentStack, tmp_path: Path) -> None:
    mark = sloppy_stack.mark()
    run = run_agent_booking(
        tmp_path / "run", sloppy_stack.url("openai-chat"), "--protocol", "clemtodd"
    )
    record = run.record
    assert run.manifest["config"]["protocol"] == "clemtodd"
    assert record["outcome"] != "aborted"
    assert "violation" not in kinds(record)
    query = events(record, "db_query")[0]
    assert query["data"]["domain"] == "hotel"
    assert query["data"]["arguments"]["name"] == HOTEL
    assert query["data"]["arguments"]["area"] == "North"  # played as sent (unknown key dropped)
    result = record["events"][record["events"].index(query) + 1]
    assert result["kind"] == "db_result" and result["actor"] == "game_master"
    assert result["data"]["total"] == 1
    # the agent read the result and went on to book: the episode is played to its end
    assert any('"total":1' in t for t in tool_messages(sloppy_stack, mark))
    assert record["outcome"] == "success", record["reason"]
    assert record["metrics"]["booking.booking_accuracy"] == 1.0


def test_strict_reprompt_hands_the_rejection_to_the_agent(
    sloppy_stack: AgentStack, tmp_path: Path
) -> None:
    mark = sloppy_stack.mark()
    run = run_agent_booking(
        tmp_path / "run",
        sloppy_stack.url("openai-chat"),
        "--protocol",
        "strict",
        "--on-violation",
        "reprompt",
    )
    record = run.record
    assert run.exit_code == 0
    # the model's next request held the rejection as the tool's result
    texts = tool_messages(sloppy_stack, mark)
    rejected = [t for t in texts if t.startswith("call rejected: ")]
    assert len(rejected) == 1 and "mood" in rejected[0], texts
    # the episode went on: one violation, then the corrected search and the booking
    game = [k for k in kinds(record) if k not in ("user_message", "system_message")]
    assert game[:3] == ["violation", "db_query", "db_result"], game
    assert events(record, "db_query")[0]["data"]["arguments"] == {"name": HOTEL}
    assert "booking_result" in game
    assert record["outcome"] == "success", record["reason"]
    assert record["metrics"]["booking.format_violations"] == 1.0
