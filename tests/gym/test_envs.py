"""Train, not only test (issue 32): a Gymnasium environment for the role under test of every
benchmark -- check_env passes, vector environments step, and a policy driven through the
environment gives the records ``todeval run`` gives with that policy as a player."""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

try:
    import gymnasium
    from gymnasium.utils.env_checker import check_env
except ImportError:  # pragma: no cover - CI installs it
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("gymnasium not installed", allow_module_level=True)

from pydantic import BaseModel

import todeval.gym as tg
from todeval import api
from todeval.benchmarks.bargain.labellers import (
    GarbageLabeller,
    KeywordLabeller,
    MajorityLabeller,
    ParserLabeller,
)
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.clarq.controls import CycleSeeker
from todeval.benchmarks.clarq.seekers import QuitterSeeker, WrongSeeker
from todeval.cli import main


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("booking", {"limit": 3}),
        ("booking", {"limit": 3, "protocol": "strict"}),
        ("clarq", {"limit": 3}),
        ("bargain", {"track": "scripted", "limit": 2}),
        ("toy", {"limit": 3}),
    ],
)
def test_check_env_passes(name: str, config: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no spec": the checker is given the bare environment
        env = gymnasium.make(tg.env_id(name), config=config, disable_env_checker=True)
        check_env(env.unwrapped)
    env.close()


def _action(output: Any) -> str:
    return output.model_dump_json() if isinstance(output, BaseModel) else str(output)


def drive(env: tg.AgentEnv, policy: Callable[[], Any], task_ids: list[str]) -> None:
    """Play each task through ``env`` with a fresh ``policy()`` fed the view and observations."""
    for task_id in task_ids:
        _, info = env.reset(options={"task_id": task_id})
        player = policy()
        asyncio.run(player.start(info["view"]))
        done = False
        while not done:
            output = asyncio.run(player.respond(info["observation"]))
            _, _, done, _, info = env.step(_action(output))


def _comparable(records: list[Any]) -> list[dict[str, Any]]:
    out = []
    for record in records:
        data = json.loads(record.model_dump_json())
        data.pop("timing")
        data.pop("channels", None)  # how the player ran: the runner's built-in, the env's policy
        for event in data["events"]:
            event.pop("t", None)
        out.append(data)
    return sorted(out, key=lambda r: r["episode_id"])


@pytest.mark.parametrize(
    ("name", "role", "player", "policy", "config"),
    [
        ("booking", "system", "rule", RuleSystem, {}),
        ("booking", "system", "rule", RuleSystem, {"protocol": "strict", "limit": 40}),
        ("clarq", "seeker", "cycle", CycleSeeker, {"limit": 40}),
        ("clarq", "seeker", "quitter", QuitterSeeker, {"limit": 20}),
        ("clarq", "seeker", "wrong", WrongSeeker, {"limit": 20, "lang": "zh"}),
        ("bargain", "labeller", "garbage", GarbageLabeller, {"track": "scripted", "limit": 5}),
        ("bargain", "labeller", "parser", ParserLabeller, {"track": "craigslist", "limit": 5}),
        ("bargain", "labeller", "keyword", KeywordLabeller, {"track": "scripted", "limit": 5}),
        ("bargain", "labeller", "majority", MajorityLabeller, {"track": "casino", "limit": 5}),
    ],
)
def test_a_policy_through_the_environment_gives_the_runners_records(
    tmp_path: Path, name: str, role: str, player: str, policy: Any, config: dict[str, Any]
) -> None:
    """The rule system on all 117 test tasks (and 40 under strict), the scripted seekers and
    a labeller: the records equal ``todeval run``'s with the same player, but for wall time.
    The fitted bargaining baselines are privileged: they play through an environment made
    with ``control=True``, which hands them the full context and records them as controls."""
    key = {"system": "system", "seeker": "seeker", "labeller": "labeller"}[role]
    ran = api.run(name, {**config, key: player}, out=tmp_path / "run", review=False)
    assert ran.episodes_run > 0
    from todeval.runner.store import RunDirectory

    expected = list(RunDirectory(tmp_path / "run").iter_episodes())
    control = bool(getattr(policy, "privileged", False))  # a fitted baseline: a control
    env = tg.make(name, config, role, control=control)
    drive(env, policy, [r.task_id for r in expected])
    env.close()
    assert _comparable(env.records) == _comparable(expected)


def test_episodes_played_through_an_environment_make_a_run(tmp_path: Path) -> None:
    env = tg.make("booking", {"limit": 4})
    drive(env, RuleSystem, [j.task_id for j in env.plan.jobs])
    result = env.write_run(tmp_path / "gym-run")
    env.close()
    assert result.summary.metrics["booking.booking_accuracy"].micro.n == 4
    manifest = json.loads((tmp_path / "gym-run" / "manifest.json").read_text())
    assert manifest["config"]["system"] == "todeval.gym.bridge:GymAgent"
    assert main(["report", str(tmp_path / "gym-run"), "-o", str(tmp_path / "r.html")]) == 0


def test_reset_seeds_draw_tasks_reproducibly_and_vector_envs_step() -> None:
    env = tg.make("toy", {})
    first = [env.reset(seed=s)[1]["task_id"] for s in (1, 2, 3)]
    again = [env.reset(seed=s)[1]["task_id"] for s in (1, 2, 3)]
    assert first == again
    env.close()
    envs = gymnasium.vector.SyncVectorEnv([lambda: tg.make("toy", {}) for _ in range(3)])
    observations, _ = envs.reset(seed=0)
    assert observations == ("", "", "")
    observations, _, terminated, _, _ = envs.step(("50", "50", "fifty"))
    assert set(observations[:2]) <= {"higher", "lower", ""} and terminated[2]
    envs.close()


def test_an_invalid_action_ends_the_episode_as_the_agents_failure() -> None:
    env = tg.make("booking", {"limit": 1})
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("I would like to help, but this is no tool call.")
    assert terminated and reward == 0.0 and info["outcome"] == "aborted"
    env.close()


def test_bargaining_offers_a_per_turn_signal() -> None:
    """With step_rewards, each labelled turn's F1 is its step's reward: the gold labels earn
    1.0 per turn, an empty answer 0.0; a benchmark without a signal refuses the option."""
    for answer, expected in (("gold", 1.0), ("none", 0.0)):
        env = tg.make("bargain", {"track": "scripted", "limit": 1}, step_rewards=True)
        _, info = env.reset(seed=0)
        task = env.plan.context.tasks[info["task_id"]]
        rewards, done = [], False
        while not done:
            index = info["observation"].index
            gold = next(list(t.gold) for t in task.turns if t.index == index)
            ids = gold if answer == "gold" else []
            _, reward, done, _, info = env.step(json.dumps({"ids": ids}))
            rewards.append(reward)
        env.close()
        assert rewards and all(r == expected for r in rewards)
    with pytest.raises(Exception, match="no per-step signal"):
        tg.make("toy", {}, step_rewards=True)


def test_the_policy_sees_the_roles_view_unless_it_is_a_declared_control() -> None:
    """The boundary: a policy is handed the labeller's view; the fitted baselines' context
    (the other dialogues' gold labels) only with control=True."""
    from todeval.benchmarks.bargain.labellers import LabellerContext, LabellerView

    for control, seen in ((False, LabellerView), (True, LabellerContext)):
        env = tg.make("bargain", {"track": "scripted", "limit": 1}, control=control)
        _, info = env.reset(seed=0)
        assert type(info["view"]) is seen
        env.close()


def test_a_training_environment_writes_no_run(tmp_path: Path) -> None:
    """A task played twice (the run would report a chosen attempt) or per-step rewards (a gold
    oracle on the very tasks played) make the episodes training: write_run refuses them."""
    from todeval.errors import UsageError

    env = tg.make("booking", {"limit": 2})
    first = env.plan.jobs[0].task_id
    drive(env, RuleSystem, [first, first])
    with pytest.raises(UsageError, match=f"task {first} .* was played 2 times"):
        env.write_run(tmp_path / "twice")
    env.close()
    assert not (tmp_path / "twice").exists()
    rewarded = tg.make("bargain", {"track": "craigslist", "limit": 1}, step_rewards=True)
    rewarded.reset(options={"task_id": rewarded.plan.jobs[0].task_id})
    rewarded.records.append(env.records[0])  # any finished episode: the refusal is about rewards
    with pytest.raises(UsageError, match="step_rewards=True"):
        rewarded.write_run(tmp_path / "rewarded")
    rewarded.close()
