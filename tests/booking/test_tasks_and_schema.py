import pytest

from todeval.benchmarks.booking.messages import (
    ActionParser,
    BookingRequest,
    DbQuery,
    SystemOutput,
    ToolCall,
)
from todeval.benchmarks.booking.schema import slot_values, tool_definitions
from todeval.benchmarks.booking.tasks import TASK_SETS, load_tasks, select_tasks
from todeval.errors import BadInputError, UsageError

SIZES = {"test": 117, "dev": 113, "synthetic": 120, "unrealistic": 120}


@pytest.mark.parametrize("task_set", list(TASK_SETS))
def test_sizes_and_unique_ids(task_set: str) -> None:
    tasks = load_tasks(task_set)
    assert len(tasks) == SIZES[task_set]
    ids = [t.task_id for t in tasks]
    assert len(set(ids)) == len(ids)
    assert all(t.task_id.startswith(task_set + "/") for t in tasks)


def test_test_set_groups() -> None:
    groups: dict[str, int] = {}
    for t in load_tasks("test"):
        groups[t.group] = groups.get(t.group, 0) + 1
    assert groups == {
        "hotel": 20,
        "restaurant": 20,
        "train": 20,
        "restaurant+train": 20,
        "hotel+train": 20,
        "hotel+restaurant": 17,
    }


def test_keys_and_values_normalised() -> None:
    for task_set in TASK_SETS:
        for t in load_tasks(task_set):
            for goal in t.domains.values():
                for slots in (goal.info, goal.fail_info, goal.book, goal.fail_book):
                    assert all(k == k.lower() for k in slots)
                    assert "invalid" not in slots and "pre_invalid" not in slots
                    assert "leaveAt" not in slots
                    for k, v in slots.items():
                        assert v == (v.upper() if k == "trainid" else v.lower())
                assert goal.info.get("type") != "guest house"


def test_corpus_turns_only_on_multiwoz_sets() -> None:
    assert all(t.corpus_turns and t.corpus_turns[0].speaker == "user" for t in load_tasks("test"))
    assert all(not t.corpus_turns for t in load_tasks("synthetic"))


def test_select_tasks() -> None:
    tasks = load_tasks("test")
    assert len(select_tasks(tasks, limit=3)) == 3
    one = select_tasks(tasks, ["sng01936"])
    assert [t.filename for t in one] == ["SNG01936.json"]
    with pytest.raises(UsageError):
        select_tasks(tasks, ["nope"])
    with pytest.raises(UsageError):
        select_tasks(tasks, limit=0)


def test_unknown_task_set_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="valid choices"):
        load_tasks("bogus")


def test_unrealistic_schema_replaces_enums_and_operators() -> None:
    v = slot_values("unrealistic")
    assert "volcano" in v.area and "clearday" in v.day and "7b" in [p.lower() for p in v.people]
    assert v.operators == ["="]
    tools = {
        t["function"]["name"]: t["function"]["parameters"] for t in tool_definitions("unrealistic")
    }
    assert "volcano" in tools["retrievefromhoteldb"]["properties"]["area"]["enum"]
    assert tools["retrievefromhoteldb"]["properties"]["stars"]["properties"]["operator"][
        "enum"
    ] == ["="]
    parser = ActionParser.for_task_set("unrealistic")
    ok = parser.parse(
        SystemOutput(tool_call=ToolCall(name="retrievefromhoteldb", arguments={"area": "volcano"}))
    )
    assert isinstance(ok, DbQuery)
    bad = parser.parse(
        SystemOutput(tool_call=ToolCall(name="retrievefromhoteldb", arguments={"area": "north"}))
    )
    assert bad.kind == "violation"
    ge = parser.parse(
        SystemOutput(
            tool_call=ToolCall(
                name="retrievefromhoteldb", arguments={"stars": {"operator": ">=", "value": "3^8"}}
            )
        )
    )
    assert ge.kind == "violation"
    # the regular schema rejects the unrealistic values
    regular = ActionParser.for_task_set("test")
    assert (
        regular.parse(
            SystemOutput(
                tool_call=ToolCall(name="retrievefromhoteldb", arguments={"area": "volcano"})
            )
        ).kind
        == "violation"
    )


def test_seven_tools_and_stars_zero_allowed() -> None:
    tools = tool_definitions("test")
    assert len(tools) == 7
    parser = ActionParser.for_task_set("test")
    args = {
        "area": "centre",
        "pricerange": "cheap",
        "type": "guesthouse",
        "internet": "yes",
        "parking": "yes",
        "name": "city centre north b and b",
        "stars": "0",
        "people": "1",
        "day": "friday",
        "stay": "5",
    }
    assert isinstance(
        parser.parse(SystemOutput(tool_call=ToolCall(name="validatehotelbooking", arguments=args))),
        BookingRequest,
    )


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (SystemOutput(text="I will search now"), "no tool call"),
        (SystemOutput(tool_call=ToolCall(name="bookeverything", arguments={})), "unknown tool"),
        (
            SystemOutput(tool_call=ToolCall(name="followup", arguments="{not json")),
            "not valid JSON",
        ),
        (SystemOutput(tool_call=ToolCall(name="followup", arguments="[1]")), "not a JSON object"),
        (SystemOutput(tool_call=ToolCall(name="followup", arguments={})), "schema violation"),
        (SystemOutput(tool_call=ToolCall(name="followup", arguments={"message": " "})), "empty"),
        (
            SystemOutput(
                tool_call=ToolCall(name="retrievefromtraindb", arguments={"leaveat": "10:00"})
            ),
            "schema violation",
        ),
        (
            SystemOutput(
                tool_call=ToolCall(
                    name="retrievefromtraindb",
                    arguments={"leaveat": {"operator": ">=", "value": "25:00"}},
                )
            ),
            "schema violation",
        ),
        (
            SystemOutput(
                tool_call=ToolCall(
                    name="validatetrainbooking", arguments={"people": "2", "trainid": "TR1"}
                )
            ),
            "schema violation",
        ),
        (
            SystemOutput(
                tool_call=ToolCall(name="retrievefromhoteldb", arguments={"colour": "red"})
            ),
            "schema violation",
        ),
    ],
)
def test_malformed_actions_are_violations(output: SystemOutput, reason: str) -> None:
    parsed = ActionParser.for_task_set("test").parse(output)
    assert parsed.kind == "violation"
    assert reason in parsed.reason


def test_bad_task_record_names_file_and_record() -> None:
    from todeval.benchmarks.booking.tasks import parse_tasks

    with pytest.raises(BadInputError, match=r"x\.json: record 1"):
        parse_tasks(
            "test",
            [{"filename": "a.json", "message": "m", "domains": {}}, {"message": "m"}],
            "x.json",
        )
