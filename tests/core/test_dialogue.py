"""The dialogue layer's shared parts: prompt templates, player resolution, replay."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from todeval.benchmarks.booking.game import play_episode
from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.benchmarks.booking.players import SYSTEM, USER
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.booking.tasks import load_tasks
from todeval.cli import main
from todeval.dialogue import PromptSet, ReplayExhausted, ReplayParticipant, recorded_turns
from todeval.errors import BadInputError, UsageError


def test_prompt_overrides_are_checked_and_hashed() -> None:
    defaults = {"brief": "Goal: ${goal}. Reply in $$ if you must.", "plain": "Hello."}
    base = PromptSet(defaults)
    assert base.render("brief", goal="a room") == "Goal: a room. Reply in $ if you must."
    changed = PromptSet(defaults, {"brief": "Be brief. ${goal}"})
    assert changed.render("brief", goal="x") == "Be brief. x" and changed.digest != base.digest
    with pytest.raises(BadInputError, match="names no template"):
        PromptSet(defaults, {"brieff": "${goal}"})
    with pytest.raises(BadInputError, match=r"unknown placeholder \$\{secret\}"):
        PromptSet(defaults, {"brief": "${goal} ${secret}"})
    with pytest.raises(BadInputError, match=r"lacks placeholder \$\{goal\}"):
        PromptSet(defaults, {"brief": "no goal here"})
    with pytest.raises(UsageError, match="needs a value"):
        base.render("brief")


def test_prompts_flag_changes_the_config_hash(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "user.txt").write_text("You are a customer. ${goal}\n")
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", "booking", "--limit", "2", "--out", str(a), "--quiet"]) == 0
    argv = ["run", "booking", "--limit", "2", "--prompts", str(prompts), "--quiet"]
    assert main([*argv, "--out", str(b)]) == 0
    import json

    ma, mb = (json.loads((d / "manifest.json").read_text()) for d in (a, b))
    assert ma["config_hash"] != mb["config_hash"]
    assert mb["config"]["prompt_overrides"] == {"user": "You are a customer. ${goal}"}
    # resuming the first run with the override is refused: the prompts are part of the config
    assert main([*argv, "--out", str(a)]) == 4
    (prompts / "typo.txt").write_text("x")
    assert main([*argv, "--out", str(tmp_path / "c")]) == 3


def test_roles_resolve_names_and_references_and_refuse_the_rest() -> None:
    assert SYSTEM.resolve("rule").cls is RuleSystem
    assert USER.resolve("tests.booking.scripted:ScriptedUser").name.endswith("ScriptedUser")
    with pytest.raises(UsageError, match="valid choices"):
        SYSTEM.resolve("nonesuch")
    with pytest.raises(UsageError, match="does not implement"):
        SYSTEM.resolve("pathlib:Path").build(__import__("todeval").dialogue.PlayerOptions("x"))


class _ReplayUser:
    """A booking user that replays recorded user turns (the shared replay participant)."""

    def __init__(self, texts: list[str]) -> None:
        self.replay = ReplayParticipant(texts)

    async def start(self, context: UserContext) -> None:
        await self.replay.start(context)

    async def respond(self, system_message: str | None) -> UserReply:
        return UserReply(text=await self.replay.respond(system_message))


def test_replayed_user_turns_give_the_same_bookings(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "booking", "--limit", "4", "--out", str(out), "--quiet"]) == 0
    turns = recorded_turns(out, kind="user_message")
    tasks = {t.task_id: t for t in load_tasks("test")}
    from todeval.runner.store import RunDirectory

    for record in RunDirectory(out).iter_episodes():
        replayed = asyncio.run(
            play_episode(
                tasks[record.task_id], RuleSystem(), _ReplayUser(turns[record.key]), run_seed=0
            )
        )
        assert replayed.details["bookings"] == record.details["bookings"]
        assert replayed.outcome == record.outcome
    short = ReplayParticipant([])
    with pytest.raises(ReplayExhausted):
        asyncio.run(short.respond(None))


def test_the_episode_module_docstring_example_runs() -> None:
    import textwrap

    import todeval.dialogue.episode as episode

    doc = episode.__doc__ or ""
    start = doc.index("runs it)::\n") + len("runs it)::\n")
    end = doc.index("\nThe rule for crashes")
    code = textwrap.dedent(doc[start:end])
    namespace: dict[str, object] = {}
    exec(compile(code, "episode-docstring", "exec"), namespace)
    record = namespace["record"]
    assert record.metrics == {"demo.ok": 1.0}  # type: ignore[attr-defined]
