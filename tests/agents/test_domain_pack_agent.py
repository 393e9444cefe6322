"""A domain pack through the MCP server (issue 31): the example Agents SDK agent (a real
process, driven by the scripted model server) is served the car-rental pack's tools, not
MultiWOZ's, and books a car-rental task with them under both protocols."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.booking.domains.cli import pack_folder
from todeval.benchmarks.booking.domains.tasks import load_pack_tasks
from todeval.benchmarks.booking.world.model import pack_task_set
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.cli import main

from .conftest import agent_stack, make_script, tool_call

TASK = "car-rental/024-goal0024"


def _script_for_task() -> tuple[list[dict[str, object]], dict[str, str]]:
    """Model rules that book TASK: search with its constraints, offer the first car, book it."""
    folder = pack_folder("car-rental")
    (task,) = [t for t in load_pack_tasks(folder) if t.task_id == TASK]
    goal = task.domains["car"]
    row = world_of(pack_task_set(folder)).database().query("car", dict(goal.info)).rows[0]
    # clemtodd (as the original) wants a search field and a booking field in a booking call
    booking = {**goal.info, "carid": row["carid"], **goal.book}
    rules: list[dict[str, object]] = [
        {"match": "rental car with", "reply": tool_call("searchcars", dict(goal.info))},
        {
            "match": '"total":',
            "reply": {
                "text": f"How about {row['carid']}? To book it, tell me the pick-up day, the "
                "number of rental days and the pick-up time."
            },
        },
        {"match": "Please book it for", "reply": tool_call("bookcar", booking)},
        {
            "match": r"Reference number: (\w+)",
            "expand": True,
            "reply": {"text": r"Booked! Your reference number is \1."},
        },
    ]
    return rules, booking


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_the_example_agent_books_a_pack_task_over_mcp(tmp_path: Path, protocol: str) -> None:
    rules, booking = _script_for_task()
    with agent_stack(make_script(rules, {"text": "Sorry, could you say that again?"})) as stack:
        out = tmp_path / "run"
        argv = ["run", "booking", "--domain", "car-rental", "--task-ids", TASK, "--system",
                "agent", "--system-url", stack.url("openai-chat"), "--protocol", protocol,
                "--out", str(out), "--quiet"]  # fmt: skip
        assert main(argv) == 0
        served = stack.served_since(0)
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["outcome"] == "success", record["reason"]
    calls = [e for e in record["events"] if e["kind"] in ("db_query", "booking_request")]
    assert [(e["kind"], e["data"]["domain"]) for e in calls] == [
        ("db_query", "car"),
        ("booking_request", "car"),
    ]
    assert calls[1]["data"]["arguments"] == booking
    assert record["details"]["bookings"]["car"]["book"] == {
        k: booking[k] for k in ("day", "days", "time")
    }
    # the model was offered the pack's tools (over MCP, without followup), not MultiWOZ's
    offered = {t["function"]["name"] for body, _ in served for t in body.get("tools", [])}
    assert offered == {"searchcars", "bookcar", "searchparking", "bookparking"}
