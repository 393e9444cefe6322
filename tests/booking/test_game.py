import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.errors import InfrastructureError
from todeval.benchmarks.booking.game import GameRules, play_episode
from todeval.benchmarks.booking.messages import is_done
from todeval.benchmarks.booking.tasks import load_tasks
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord

from .scripted import ScriptedSystem, ScriptedUser

GOLDEN = Path(__file__).parent / "golden" / "episode.json"
TASK = load_tasks("test")[0]  # hotel: city centre north b and b, 1 person, 5 nights, friday
HOTEL = {
    "area": "north",
    "pricerange": "cheap",
    "type": "guesthouse",
    "internet": "yes",
    "parking": "yes",
    "name": "city centre north b and b",
    "stars": "0",
}


def play(
    user: ScriptedUser, system: ScriptedSystem, rules: GameRules | None = None
) -> EpisodeRecord:
    rules = rules or GameRules(protocol="strict")  # these tests pin the strict rules
    return asyncio.run(play_episode(TASK, system, user, run_seed=7, trial=0, rules=rules))


@pytest.mark.parametrize("text", ["done", "DONE", "Done.", "done,", "  done  "])
def test_done_accepted(text: str) -> None:
    assert is_done(text)


@pytest.mark.parametrize("text", ["done!", "I am done", "done. thanks", "", "don e", "done,."])
def test_done_rejected(text: str) -> None:
    assert not is_done(text)


def golden_episode() -> EpisodeRecord:
    user = ScriptedUser(
        ["I need the city centre north b and b.", "Book it for 1 person, 5 nights from friday."]
    )
    system = ScriptedSystem(
        [
            ("retrievefromhoteldb", {"name": "city centre north b and b"}),
            ("followup", {"message": "Found it. How many people and nights?"}),
            (
                "validatehotelbooking",
                {**HOTEL, "people": "1", "day": "friday", "stay": "5", "name": "nowhere inn"},
            ),
            (
                "validatehotelbooking",
                {**HOTEL, "people": "1", "day": "friday", "stay": "5", "phone": "01223312843"},
            ),
            ("followup", {"message": "Booked."}),
        ]
    )
    return play(user, system)


def _strip_timing(record: EpisodeRecord) -> dict[str, Any]:
    data = record.model_dump(mode="json")
    data.pop("timing")
    for event in data["events"]:
        event.pop("t")
    return data


def test_golden_episode() -> None:
    record = golden_episode()
    data = _strip_timing(record)
    if os.environ.get("TODEVAL_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert data == expected
    assert record.outcome is Outcome.SUCCESS
    assert record.metrics["booking.booking_accuracy"] == 1.0
    assert record.timing.duration_s >= 0


def test_abort_on_malformed_action() -> None:
    record = play(ScriptedUser(["hi"]), ScriptedSystem(["Sure, let me check that for you."]))
    assert record.outcome is Outcome.ABORTED
    assert "no tool call" in record.reason
    assert record.metrics["booking.aborted"] == 1.0
    assert record.metrics["booking.format_violations"] == 1.0
    assert record.details["violations"][0]["raw"] == "Sure, let me check that for you."


def test_reprompt_allows_one_retry_and_counts_violation() -> None:
    rules = GameRules(on_violation="reprompt")
    system = ScriptedSystem(["oops", ("followup", {"message": "How can I help?"})])
    record = play(ScriptedUser(["hi"]), system, rules)
    assert record.outcome is Outcome.FAILURE  # user said done, nothing booked
    assert record.metrics["booking.format_violations"] == 1.0
    assert system.observations[1].kind == "violation"
    twice = play(ScriptedUser(["hi"]), ScriptedSystem(["oops", "oops again"]), rules)
    assert twice.outcome is Outcome.ABORTED


def test_turn_cap_without_done() -> None:
    user = ScriptedUser(["hello"] * 20)
    record = play(user, ScriptedSystem([]))
    assert record.outcome is Outcome.FAILURE
    assert record.turns == 15
    assert record.metrics["booking.turn_cap"] == 1.0
    assert sum(1 for e in record.events if e.kind == "user_message") == 15


def test_done_on_the_last_turn_is_a_failure_even_if_booked() -> None:
    booking = ("validatehotelbooking", {**HOTEL, "people": "1", "day": "friday", "stay": "5"})
    system = ScriptedSystem([booking, ("followup", {"message": "Booked."})])
    user = ScriptedUser(["book it"] + ["thanks"] * 13)  # 14 turns, then "done" on turn 15
    record = play(user, system)
    assert record.details["bookings"]["hotel"]["reference"]
    assert record.turns == 15
    assert record.outcome is Outcome.FAILURE and "last turn" in record.reason
    assert record.metrics["booking.booking_accuracy"] == 0.0
    user14 = ScriptedUser(["book it"] + ["thanks"] * 12)  # done on turn 14 succeeds
    system14 = ScriptedSystem([booking, ("followup", {"message": "Booked."})])
    assert play(user14, system14).outcome is Outcome.SUCCESS


def test_inner_loop_cap_aborts() -> None:
    query = ("retrievefromhoteldb", {"area": "north"})
    record = play(ScriptedUser(["hi"]), ScriptedSystem([query] * 15))
    assert record.outcome is Outcome.ABORTED and "inner-loop cap" in record.reason
    fourteen = play(
        ScriptedUser(["hi"]), ScriptedSystem([query] * 14 + [("followup", {"message": "x"})])
    )
    assert fourteen.outcome is Outcome.FAILURE


def test_empty_user_reply_ends_as_user_simulator_error() -> None:
    record = play(ScriptedUser([""]), ScriptedSystem([]))
    assert record.outcome is Outcome.USER_SIMULATOR_ERROR
    assert record.metrics["booking.inform"] == 0.0


class _BrokenSystem(ScriptedSystem):
    async def respond(self, observation: Any) -> Any:
        raise ConnectionError("server went away")


class _BrokenUser(ScriptedUser):
    async def respond(self, system_message: str | None) -> Any:
        raise ValueError("bad prompt")


class _OutageSystem(ScriptedSystem):
    async def respond(self, observation: Any) -> Any:
        raise InfrastructureError("no answer after 3 attempts", kind="timeout")


def test_player_exceptions_are_recorded_not_raised() -> None:
    # the system under test crashing is its own failure: counted in every metric
    record = play(ScriptedUser(["hi"]), _BrokenSystem())
    assert record.outcome is Outcome.SYSTEM_ERROR and "server went away" in record.reason
    assert record.termination == "system_error"
    assert record.labels["failure_class"] == "system_error"
    assert record.metrics["booking.booking_accuracy"] == 0.0
    assert record.outcome.counts_in_metrics
    # our model backends failing after retries is infrastructure: excluded, re-run on resume
    record = play(ScriptedUser(["hi"]), _OutageSystem())
    assert record.outcome is Outcome.INFRASTRUCTURE_ERROR and record.termination == "infrastructure"
    record = play(_BrokenUser(), ScriptedSystem())
    assert record.outcome is Outcome.USER_SIMULATOR_ERROR
    assert record.termination == "simulator_error"


def test_system_never_sees_goal_and_players_get_own_rngs() -> None:
    user, system = ScriptedUser(["hi"]), ScriptedSystem([])
    play(user, system)
    assert not hasattr(system.context, "task")
    assert system.context.task_set == "test" and len(system.context.tools) == 7
    assert user.context.task.task_id == TASK.task_id
    assert user.context.rng.random() != system.context.rng.random()


def test_same_seed_same_record_apart_from_timing() -> None:
    assert _strip_timing(golden_episode()) == _strip_timing(golden_episode())
