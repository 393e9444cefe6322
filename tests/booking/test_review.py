"""Who failed (issue 30, first part): the rule review on scripted episodes with a known fault
of each side, on the agenda user against the rule system (no simulator fault), and the
``todeval booking review`` command on a run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.booking.review import mentions, review_episode
from todeval.benchmarks.booking.tasks import load_tasks
from todeval.cli import main
from todeval.testing.booking_faults import SYSTEM_KINDS, USER_KINDS, measure

from .scripted import ScriptedSystem, ScriptedUser
from .test_game import HOTEL, TASK, play

BOOK = {**HOTEL, "people": "1", "day": "friday", "stay": "5"}


def _kinds(user: list[str], system: list[object]) -> tuple[str, set[tuple[str, str]]]:
    record = play(ScriptedUser(user), ScriptedSystem(system))  # type: ignore[arg-type]
    review = review_episode(TASK, record)
    return review.verdict, {(f.side, f.kind) for f in review.faults}


def test_mentions_read_values_and_skip_names_and_negations() -> None:
    found = mentions("A cheap guest house for 2 people, 3 nights from Friday", ["x"])
    assert found == {
        "pricerange": {"cheap"}, "type": {"guesthouse"}, "people": {"2"}, "stay": {"3"},
        "day": {"friday"},
    }  # fmt: skip
    assert "area" not in mentions("the city centre north b and b", ["city centre north b and b"])
    assert "type" not in mentions("a proper hotel, not a guesthouse")
    assert mentions("two people please")["people"] == {"2"}
    assert mentions("for a group of 8")["people"] == {"8"}
    assert mentions("7 tickets please")["people"] == {"7"}


def test_a_user_contradicting_its_goal_is_the_simulator_s_fault() -> None:
    verdict, kinds = _kinds(
        ["I need the city centre north b and b for 3 people.", "done"],
        [("followup", {"message": "Sure, which day and how many nights?"})],
    )
    assert verdict == "simulator" and ("simulator", "contradicts_goal") in kinds


def test_a_system_booking_another_day_than_the_user_said_is_the_system_s_fault() -> None:
    verdict, kinds = _kinds(
        [
            "I need the city centre north b and b.",
            "Book it for 1 person, 5 nights from friday.",
            "done",
        ],
        [
            ("followup", {"message": "How many people, which day, how many nights?"}),
            ("validatehotelbooking", {**BOOK, "day": "monday"}),
            ("followup", {"message": "Booked."}),
        ],
    )
    assert verdict == "agent" and ("agent", "ignored_constraint") in kinds


def test_a_user_that_quits_without_its_booking_details_ended_too_early() -> None:
    verdict, kinds = _kinds(
        ["I need the city centre north b and b.", "done"],
        [("followup", {"message": "How many people will stay, and which day?"})],
    )
    assert verdict == "simulator"
    assert {("simulator", "early_done"), ("simulator", "withheld_value")} <= kinds


def test_a_system_that_never_books_what_it_was_given_gave_up() -> None:
    verdict, kinds = _kinds(
        ["I need the city centre north b and b for 1 person, 5 nights from friday.", "done"],
        [("followup", {"message": "Your booking is done, reference ABC12345."})],
    )
    assert verdict == "agent"
    assert {("agent", "gave_up"), ("agent", "invented_reference")} <= kinds


def test_a_successful_episode_has_no_verdict() -> None:
    verdict, _ = _kinds(
        ["I need the city centre north b and b.", "Book it for 1 person, 5 nights from friday."],
        [
            ("followup", {"message": "Found it. How many people and nights?"}),
            ("validatehotelbooking", BOOK),
            ("followup", {"message": "Booked."}),
        ],
    )
    assert verdict == "none"


@pytest.fixture(scope="module")
def agenda_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("review") / "agenda"
    assert main(["run", "booking", "--protocol", "strict", "--quiet", "--out", str(out)]) == 0
    return out


def test_the_agenda_user_against_the_rule_system_commits_no_simulator_fault(
    agenda_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "review.jsonl"
    assert main(["booking", "review", str(agenda_run), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "who failed" in text and "117 episodes" in text
    reviews = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(reviews) == 117
    assert not [f for r in reviews for f in r["faults"] if f["side"] == "simulator"]
    assert main(["booking", "review", str(tmp_path / "nope")]) == 3


def test_todeval_review_reads_any_registered_benchmark(
    agenda_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The generic command: the booking reviewer from the run's manifest, the summary as JSON
    (the simulator fault rate and the conditional success beside the plain success)."""
    assert main(["review", str(agenda_run), "--json"]) == 0
    [summary] = json.loads(capsys.readouterr().out)
    assert summary["benchmark"] == "booking" and summary["agent"] == "system"
    assert summary["episodes"] == 117 and summary["simulator_fault_rate"]["k"] == 0
    assert summary["success_unspoiled"]["value"] == summary["success"]["value"]
    table = tmp_path / "who.csv"
    assert main(["review", str(agenda_run), "--csv", str(table)]) == 0
    text = capsys.readouterr().out
    assert "success where the user simulator spoiled nothing (conditional)" in text
    rows = table.read_text().splitlines()
    assert rows[0] == "run,benchmark,row,side,name,k,n,value,low,high"
    assert any(",rate,simulator,episodes with a simulator fault,0,117," in r for r in rows)


@pytest.mark.parametrize("kind", [*USER_KINDS, *SYSTEM_KINDS])
def test_planted_mistakes_are_found(kind: str) -> None:
    """Players with one known mistake in half the episodes (todeval.testing.booking_faults):
    the review finds each kind with precision and recall >= 0.9 (on all 117 test goals every
    kind is 1.000 but ignored_constraint, 0.969 and 0.984; docs/user-simulators.md). Here the
    first 40 goals."""
    figures = measure(kind, load_tasks("test")[:40])
    assert figures.planted >= 10, figures
    assert (figures.precision or 0) >= 0.9 and (figures.recall or 0) >= 0.9, figures


def test_an_empty_run_directory_is_refused(tmp_path: Path, agenda_run: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "manifest.json").write_text((agenda_run / "manifest.json").read_text())
    assert main(["review", str(empty)]) == 3
