"""The booking adversary family (issue 41): skill-less systems with parameters that read only
the system's view, declared for ``todeval validate booking`` under both protocols on MultiWOZ's
test goals and the example pack; the pack user's paraphrases that keep parrots out; a user that
gave up scores nothing."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from todeval.benchmarks.booking.adversaries import SPACE, AdversarySystem, parameters
from todeval.benchmarks.booking.domains.cli import pack_folder
from todeval.benchmarks.booking.domains.language import (
    read_slot,
    read_time,
    say,
    shared_values,
    spoken_time,
    words,
)
from todeval.benchmarks.booking.domains.pack import cached_pack
from todeval.benchmarks.booking.game import GameRules, play_episode
from todeval.benchmarks.booking.players import SYSTEM
from todeval.benchmarks.booking.profile import PROFILE
from todeval.benchmarks.booking.systems.controls import SUITE
from todeval.benchmarks.booking.tasks import load_tasks
from todeval.benchmarks.booking.users.ending import EndReason
from todeval.cli import main
from todeval.dialogue.participants import PlayerOptions
from todeval.errors import UsageError

from .scripted import ScriptedSystem, ScriptedUser
from .test_game import HOTEL


def test_parameters_default_to_their_first_choice_and_refuse_unknown_ones() -> None:
    assert parameters({}) == {k: v[0] for k, v in SPACE.items()}
    assert parameters({"rows": "5", "reply": "echo"})["rows"] == 5  # names carry strings
    with pytest.raises(UsageError, match="adversary parameter 'colour' unknown"):
        parameters({"colour": "red"})
    with pytest.raises(UsageError, match=r"adversary rows='7': choose one of 1, 2, 5"):
        parameters({"rows": "7"})
    assert AdversarySystem(PlayerOptions(role="system", params={"strategy": "enumerate"})).p[
        "strategy"
    ] == "enumerate"  # fmt: skip


def test_the_adversary_is_a_system_under_test_not_a_control() -> None:
    factory = SYSTEM.resolve("adversary?strategy=ask-all&rows=2")
    assert not factory.privileged  # handed the system's view: never the goal
    assert factory.params == {"strategy": "ask-all", "rows": "2"}


def test_the_suite_declares_the_family_for_both_protocols_and_the_pack() -> None:
    families = {f.name: f for f in SUITE.adversaries}
    assert set(families) == {
        "parrot/clemtodd", "parrot/strict", "parrot/clemtodd/car-rental",
        "parrot/strict/car-rental", "parrot-inform/clemtodd/car-rental",
        "parrot-inform/strict/car-rental",
    }  # fmt: skip
    metrics = {c.metric for c in PROFILE.columns}
    for family in families.values():
        assert family.metric in metrics and family.low == 0.0
        assert dict(family.space) == SPACE
    assert families["parrot/strict"].high == 0.05


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
@pytest.mark.parametrize("domain", [None, "car-rental"])
@pytest.mark.parametrize("strategy", ["parrot", "enumerate", "ask-all"])
def test_every_strategy_plays_without_breaking_the_rules(
    tmp_path: Path, protocol: str, domain: str | None, strategy: str
) -> None:
    """Each strategy's calls are valid under both protocols (no search without a field under
    clemtodd, no booking without its required arguments under strict): it loses on the merits."""
    out = tmp_path / "run"
    system = f"adversary?strategy={strategy}&book_when=every&reply=booked"
    argv = ["run", "booking", "--system", system, "--protocol", protocol, "--limit", "6"]
    argv += ["--domain", domain] if domain else []
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["booking.aborted"]["micro"]["value"] == 0.0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "booking_request" for r in records for e in r["events"])


def test_validate_searches_the_family_on_the_pack(tmp_path: Path) -> None:
    """A small search: the best agent found stays inside the band, and the report says so."""
    report = tmp_path / "report.json"
    argv = ["validate", "booking", "--only", "parrot/strict/car-rental", "--limit", "12"]
    assert main([*argv, "--budget", "48", "--quiet", "-o", str(report)]) == 0
    (family,) = json.loads(report.read_text())["adversaries"]
    assert family["passed"] and family["episodes"] >= 48
    assert family["best"]["value"] <= 0.05


# -- the pack user's paraphrases ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_a_paraphrased_value_reads_back_as_itself(seed: int) -> None:
    """Every value of every slot of the example pack, said as the agenda user says it, is read
    back by the pack's reader (the rule system's and the review's) as that value."""
    rng = random.Random(seed)
    pack = cached_pack(str(pack_folder("car-rental")))
    for entity in pack.entities.values():
        shared = shared_values(entity)
        for name, slot in {**entity.slots, **entity.booking}.items():
            if slot.type == "text":
                continue
            values = slot.values or (["12:45", "08:15", "19:00"] if slot.type == "time" else [])
            values = values or ["1", "7", "13"]
            for value in values:
                said = say(slot, value, shared, rng, contrast=name not in entity.booking)
                assert read_slot(slot, f"I need one with {said}.", (), shared) == value, said


def test_the_pack_user_does_not_say_the_schema_values_word_for_word() -> None:
    """Paraphrases as MultiWOZ's user does: number words, spoken times, yes/no slots by their
    description, aliases, a value beside one it does not want."""
    pack = cached_pack(str(pack_folder("car-rental")))
    car = pack.entities["car"]
    rng = random.Random(0)
    assert say(car.slots["seats"], "7", rng=rng) == "seven seats"
    assert say(car.booking["time"], "15:30", rng=rng) == "at half past three in the afternoon"
    parking = pack.entities["parking"]
    covered = say(parking.slots["covered"], "yes", shared_values(parking), rng)
    assert "yes" not in covered and "covered parking" in covered
    said = {say(car.slots["category"], "suv", rng=random.Random(s)) for s in range(20)}
    assert any("4x4" in s for s in said) and any(" not " in f" {s} " for s in said)
    assert read_slot(car.slots["fuel"], "petrol rather than diesel") == "petrol"
    assert read_slot(car.slots["fuel"], "not diesel but petrol") == "petrol"
    assert read_slot(car.slots["fuel"], "a diesel, please") == "diesel"


def test_a_value_the_pack_has_another_word_for_is_never_said_as_spelled() -> None:
    """As MultiWOZ's user always says "upmarket" or "somewhere central" where it has such a
    wording: a value with an alias is said through one, a yes/no slot never with a bare "yes"
    or "no" (a parrot finds "no" beside the slot's words), so the schema's strings a parrot
    looks for are not in the user's words (issue 41)."""
    pack = cached_pack(str(pack_folder("car-rental")))
    for entity in pack.entities.values():
        shared = shared_values(entity)
        for slot in entity.slots.values():
            for value in slot.values or []:
                other_word = [a for a, v in slot.aliases.items() if v == value]
                for seed in range(20):
                    said = words(say(slot, value, shared, random.Random(seed)))
                    if other_word:
                        assert f" {value} " not in said, said
                    if set(slot.values or ()) == {"yes", "no"}:
                        assert " yes " not in said and " no " not in said, said


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_the_parrots_inform_nothing_on_the_pack(tmp_path: Path, protocol: str) -> None:
    """The parrot that books when asked and the one that books every returned row meet no
    car-rental goal (MultiWOZ's test goals: 1 of 117 and 0; docs/validation.md)."""
    for i, system in enumerate(
        ["adversary?strategy=parrot&book_when=asked&reply=booked",
         "adversary?strategy=parrot&rows=5&book_when=every&reply=booked"]
    ):  # fmt: skip
        out = tmp_path / str(i)
        argv = ["run", "booking", "--domain", "car-rental", "--system", system]
        assert main([*argv, "--protocol", protocol, "--quiet", "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["metrics"]["booking.inform"]["micro"]["value"] == 0.0, system


@pytest.mark.parametrize("hhmm", ["00:00", "00:45", "08:05", "11:45", "12:00", "12:45", "23:45"])
def test_spoken_times_read_back(hhmm: str) -> None:
    spoken = spoken_time(hhmm)
    assert spoken is not None and hhmm not in spoken  # said as a person says it
    assert read_time(spoken) == hhmm
    assert read_time("at 3:30 pm") == "15:30" and read_time("at 15:30") == "15:30"


# -- a user that gave up ----------------------------------------------------------------------


class _GivingUp(ScriptedUser):
    """Says its lines, then gives up: done, with the reason a giving-up agenda user reports."""

    end_reason = EndReason.GAVE_UP_NO_PROGRESS


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_a_booking_the_user_gave_up_on_scores_nothing(protocol: str) -> None:
    """The system booked the goal's hotel but never told the user, who gave up: not a success
    (what was booked without telling the user is not scored), under both protocols."""
    task = load_tasks("test")[0]
    booking = {**HOTEL, "people": "1", "day": "friday", "stay": "5"}
    lines = ["I need the city centre north b and b.", "Book it for 1 person, 5 nights, friday."]

    def play(user: ScriptedUser) -> dict[str, float]:
        system = ScriptedSystem(
            [("followup", {"message": "Hm?"}), ("validatehotelbooking", booking),
             ("followup", {"message": "Hm?"})]
        )  # fmt: skip
        rules = GameRules(protocol=protocol)
        record = asyncio.run(play_episode(task, system, user, run_seed=7, rules=rules))
        return record.metrics

    assert play(ScriptedUser(list(lines)))["booking.booking_accuracy"] == 1.0
    gave_up = play(_GivingUp(list(lines)))
    assert gave_up["booking.booking_accuracy"] == gave_up["booking.inform"] == 0.0


def test_the_pack_user_takes_each_entitys_reference_from_one_message() -> None:
    """A system that books the car and the car park at once and says both references in one
    message has told the user both: the user does not wait for the second one again."""
    from todeval.benchmarks.booking.domains.tasks import load_pack_tasks
    from todeval.benchmarks.booking.messages import UserContext
    from todeval.benchmarks.booking.users.pack_user import PackUser

    task = next(t for t in load_pack_tasks(pack_folder("car-rental")) if len(t.domains) == 2)
    user = PackUser()
    rng = random.Random(0)
    asyncio.run(user.start(UserContext(task=task, rng=rng, seed=0, trial=0)))
    said = "car booked, reference ABC123; parking booked, reference XYZ789. Anything else?"
    first = asyncio.run(user.respond(None)).text
    assert first != "done"
    assert asyncio.run(user.respond(said)).text == "done"


# -- credit for the row the system commits to (strict) ----------------------------------------


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_booking_several_rows_in_one_turn_earns_nothing_under_strict(protocol: str) -> None:
    """Under ``strict`` a domain in which the system booked two different rows within one user
    turn is not credited, even when the last of them is the goal's; a rebooking after the user
    spoke is. ``clemtodd`` scores the merged booking arguments, as the original does."""
    task = load_tasks("test")[0]  # hotel: city centre north b and b, 1 person, 5 nights, friday
    details = {"people": "1", "day": "friday", "stay": "5"}
    acorn = {**HOTEL, "pricerange": "moderate", "name": "acorn guest house", "stars": "4"}
    other = ("validatehotelbooking", {**acorn, **details})
    goal = ("validatehotelbooking", {**HOTEL, **details})
    said = ("followup", {"message": "Booked, reference number 00000000."})

    def play(*outputs: tuple[str, dict[str, str]]) -> dict[str, float]:
        lines = ["I need the city centre north b and b for 1 person, 5 nights, friday."] * 2
        rules = GameRules(protocol=protocol)
        system, user = ScriptedSystem(list(outputs)), ScriptedUser(lines)
        record = asyncio.run(play_episode(task, system, user, run_seed=7, rules=rules))
        assert record.outcome.value != "aborted", record.reason
        return record.metrics

    blind = play(other, goal, said, said)
    assert (
        blind["booking.inform"]
        == blind["booking.booking_accuracy"]
        == (1.0 if protocol == "clemtodd" else 0.0)
    )
    rebooked = play(other, said, goal, said)  # the user spoke between the two bookings
    assert rebooked["booking.inform"] == rebooked["booking.booking_accuracy"] == 1.0
    again = play(goal, goal, said, said)  # one row twice in a turn: committed to it
    assert again["booking.booking_accuracy"] == 1.0
