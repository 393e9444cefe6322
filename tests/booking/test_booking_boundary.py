"""The booking system's information boundary and its controls (issue 26): a system reading
everything it is handed finds nothing of the goal the user has not said; only the privileged
oracle is handed the task; ``todeval validate booking`` holds under both protocols."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    SystemStart,
    ToolCall,
    UserMessage,
)
from todeval.benchmarks.booking.tasks import BookingTask, load_tasks
from todeval.cli import main
from todeval.core.rng import derive_seed
from todeval.testing.snoop import Snooper, leaks, texts_in


class SnoopingSystem(Snooper):
    """Reads everything it is handed; never calls a tool (so only the user can tell it)."""

    async def respond(self, observation: Observation) -> SystemOutput:
        self.saw(observation)
        return SystemOutput(
            tool_call=ToolCall(name="followup", arguments={"message": "Tell me more, please."})
        )


class PrivilegedSnoop(SnoopingSystem):
    privileged = True


def _goal_secrets(task: BookingTask, public: str) -> list[str]:
    """The goal message, and the goal's values that the public tool definitions do not hold."""
    values = {
        v
        for goal in task.domains.values()
        for part in (goal.info, goal.fail_info, goal.book, goal.fail_book)
        for v in part.values()
    }
    return [task.message, *(v for v in values if len(v) >= 4 and v.lower() not in public)]


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_a_system_is_handed_nothing_of_the_goal_the_user_has_not_said(
    protocol: str, tmp_path: Path
) -> None:
    SnoopingSystem.journal = []
    argv = ["run", "booking", "--system", f"{__name__}:SnoopingSystem", "--protocol", protocol,
            "--limit", "30", "--out", str(tmp_path / "run"), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    records = [
        json.loads(x) for x in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    ]
    played = {r["task_id"] for r in records}
    # the system's seed is derived from (run seed, task id, trial, "system"): which task it played
    by_seed = {
        derive_seed(0, t.task_id, 0, "system"): t for t in load_tasks("test") if t.task_id in played
    }
    journal = [s for s in SnoopingSystem.journal or [] if s.context is not None]
    assert len(journal) == len(records) == 30
    found = 0
    for snooped in journal:
        context = snooped.context
        assert isinstance(context, SystemContext) and not isinstance(context, SystemStart)
        # public: the tool definitions and the run's options (the same for every task: the
        # prompt templates name Cambridge's places); the goal message is never public
        public = "\n".join([*texts_in(context.tools), *texts_in(snooped.options)]).lower()
        said = "\n".join(o.text for o in snooped.observations if isinstance(o, UserMessage))
        task = by_seed[context.seed]
        secrets = _goal_secrets(task, public)
        assert leaks([snooped.options, context], secrets) == []  # nothing before the dialogue
        unsaid = [s for s in secrets if s.lower() not in said.lower()]
        assert leaks([snooped.observations], unsaid) == []  # nothing the user did not say
        found += 1
    assert found == 30


def test_the_privileged_oracle_is_handed_the_task(tmp_path: Path) -> None:
    PrivilegedSnoop.journal = []
    argv = ["run", "booking", "--system", f"{__name__}:PrivilegedSnoop", "--limit", "3",
            "--out", str(tmp_path / "run"), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    journal = [s for s in PrivilegedSnoop.journal or [] if s.context is not None]
    assert journal and all(isinstance(s.context, SystemStart) for s in journal)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["roles"]["system"]["privileged"] is True


def test_validate_booking_holds_under_both_protocols(tmp_path: Path) -> None:
    """The named controls (the adversary families are searched in test_adversaries.py)."""
    out = tmp_path / "booking.json"
    assert main(["validate", "booking", "--no-search", "--quiet", "-o", str(out)]) == 0
    results = {r["name"]: r for r in json.loads(out.read_text())["results"]}
    for protocol in ("clemtodd", "strict"):
        for floor in ("silent", "echo", "first-row", "copy-example"):
            assert results[f"{floor}/{protocol}"]["value"] <= 0.05
        assert results[f"oracle/{protocol}"]["value"] >= 0.95
        assert results[f"oracle/{protocol}"]["n"] == 117
        for name in ("silent", "echo", "first-row", "copy-example"):  # the example domain pack
            assert results[f"{name}/{protocol}/car-rental"]["value"] <= 0.05
        for name in ("oracle", "rule"):
            assert results[f"{name}/{protocol}/car-rental"]["value"] >= 0.95
            assert results[f"{name}/{protocol}/car-rental"]["n"] == 240
