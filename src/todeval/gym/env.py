"""A Gymnasium environment for the agent-under-test role of any benchmark (docs/gym.md).

:class:`AgentEnv` builds the benchmark's own run plan from its spec, with the role under test
played by :class:`~todeval.gym.bridge.GymAgent`, and plays one of the plan's episodes per
``reset``: the benchmark's episode, its simulators, its seeded streams and its scorer, exactly
as ``todeval run`` plays them. The role's view and each observation reach the policy; each
action goes back as the role's output.

* observation: the role's observation as text (a model's JSON, or the text it was handed);
  ``info["observation"]`` is the object itself and ``info["view"]`` (at ``reset``) the role's
  view of the episode -- what the role may see, never more (a role's view function is applied
  before the player is started, as in every run; ``control=True`` hands a privileged policy
  the full start context instead, and the run records it as a control, never ranked);
* action: the role's output as text: JSON of its output model (booking: ``{"tool_call":
  {"name": ..., "arguments": {...}}}``; bargaining: ``{"ids": [...]}``), or plain text where
  the role answers with text (ClarQ's seeker) or the model has a ``text`` field;
* reward: 0 until the episode ends, then the benchmark's success metric (the metric pass^k
  counts); with ``step_rewards=True`` and a benchmark that declares a per-step signal
  (``BenchmarkSpec.step_reward``; bargaining: the turn's F1), each step's signal instead;
  ``info["metrics"]`` holds every episode metric, ``info["outcome"]`` the outcome, and
  :attr:`AgentEnv.records` every finished episode's record.

``reset(seed=...)`` draws a task from the plan's jobs with the environment's seeded generator,
or plays ``options={"task_id": ..., "trial": ...}``; the episode's own streams come from the
run seed, the task and the trial, as in the runner -- so driving a policy through the
environment gives the records ``todeval run`` gives with that policy.
:meth:`AgentEnv.write_run` writes the episodes played so far to a run directory, reported like
any run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium import spaces
from pydantic import BaseModel

from todeval.core.imports import load_reference
from todeval.core.records import EpisodeRecord
from todeval.errors import UsageError
from todeval.gym.bridge import CHANNEL, CONTROL_REFERENCE, REFERENCE, Channel, output_type
from todeval.runner.execute import RunResult, execute_plan, release_plan
from todeval.runner.plan import EpisodeJob, RunPlan

MAX_TEXT = 200_000
"""The longest observation or action (characters)."""
CHARSET = (
    "\t\n"
    + "".join(chr(c) for c in range(0x20, 0xD800))
    + "".join(chr(c) for c in range(0xE000, 0xFFFE))
)
"""Every character an observation or action may hold (the Basic Multilingual Plane)."""


def text(value: Any) -> str:
    """An observation as the text the policy is given (nothing: "")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json.dumps(dataclasses.asdict(value), default=str, ensure_ascii=False)
    return str(value)


def _spec(benchmark: str) -> Any:
    from todeval.registry import discover

    entries = discover().benchmarks
    if benchmark not in entries:
        known = ", ".join(sorted(entries))
        raise UsageError(f"unknown benchmark {benchmark!r} (registered: {known})")
    return load_reference(entries[benchmark].spec, what="benchmark spec")


def agent_role(spec: Any, role: str | None = None) -> Any:
    """The role under test: ``role``, or the one an external agent can take, or the first."""
    roles = [r for r in spec.roles if r.role is not None and r.player_key is not None]
    if role is not None:
        found = [r for r in roles if r.name == role]
        if not found:
            names = ", ".join(r.name for r in roles)
            raise UsageError(f"{spec.name} has no playable role {role!r} (roles: {names})")
        return found[0]
    seated = [r for r in roles if r.agent is not None]
    if not (seated or roles):
        raise UsageError(f"{spec.name} declares no role a policy can play")
    return (seated or roles)[0]


class AgentEnv(gymnasium.Env[str, str]):
    """One benchmark's agent-under-test role as a Gymnasium environment (see the module)."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (Gymnasium's attribute)

    def __init__(
        self,
        benchmark: str,
        config: Mapping[str, Any] | None = None,
        role: str | None = None,
        *,
        max_text: int = MAX_TEXT,
        step_rewards: bool = False,
        control: bool = False,
    ) -> None:
        spec = _spec(benchmark)
        if step_rewards and spec.step_reward is None:
            raise UsageError(f"{benchmark} has no per-step signal (step_rewards=False)")
        self._step_reward = spec.step_reward if step_rewards else None
        self.role = agent_role(spec, role)
        player = CONTROL_REFERENCE if control else REFERENCE
        fields = {**dict(config or {}), self.role.player_key: player}
        self.plan: RunPlan = spec.plan(fields)
        self.benchmark = benchmark
        self.observation_space = spaces.Text(max_length=max_text, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=max_text, min_length=0, charset=CHARSET)
        self.records: list[EpisodeRecord] = []
        self._jobs = list(self.plan.jobs)
        self._channel: Channel | None = None
        self._thread: threading.Thread | None = None
        self._done = True
        self._output = output_type(self.role.role.protocol)
        self._seen: Any = None
        self._task: Any = None

    # -- the Gymnasium API ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._stop()
        job = self._job(options or {})
        self._task = self.plan.context.tasks.get(job.task_id) if self.plan.context else None
        channel = Channel(self._output, reader=self.role.role.action, role=self.role.name)
        self._channel, self._done = channel, False

        def play() -> None:
            CHANNEL.set(channel)

            async def episode() -> EpisodeRecord:
                return await self.plan.play(job)

            try:
                record = asyncio.run(episode())
            except BaseException as exc:  # handed to the caller of reset/step
                channel.seen.put(("error", exc))
            else:
                channel.seen.put(("end", record))

        self._thread = threading.Thread(target=play, name=f"todeval-gym-{job.task_id}", daemon=True)
        self._thread.start()
        observation, _, _, _, info = self._next()
        if self._done:  # an episode that ended before the role said anything
            return observation, info
        info.update(task_id=job.task_id, trial=job.trial, view=channel.view)
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done or self._channel is None:
            raise RuntimeError("step() after the episode ended: call reset()")
        seen = self._seen
        self._channel.actions.put(str(action))
        observation, reward, done, truncated, info = self._next()
        if self._step_reward is not None:  # the signal of this action, instead of the ending's
            output = self._channel.last_output
            reward = 0.0 if output is None else float(self._step_reward(self._task, seen, output))
        return observation, reward, done, truncated, info

    def close(self) -> None:
        self._stop()
        release_plan(self.plan)

    # -- helpers --------------------------------------------------------------------------------
    def _job(self, options: Mapping[str, Any]) -> EpisodeJob:
        if "task_id" in options:
            trial = int(options.get("trial", 0))
            for job in self._jobs:
                if job.task_id == options["task_id"]:
                    return EpisodeJob(job.task_id, trial, job.group)
            raise UsageError(f"{options['task_id']!r} is not a task of this environment's plan")
        jobs: list[EpisodeJob] = self._jobs
        return jobs[int(self.np_random.integers(len(jobs)))]

    def _next(self) -> tuple[str, float, bool, bool, dict[str, Any]]:
        assert self._channel is not None
        kind, payload = self._channel.seen.get()
        if kind == "observation":
            self._seen = payload
            return text(payload), 0.0, False, False, {"observation": payload}
        self._done = True
        if self._thread is not None:
            self._thread.join()
        if kind == "error":
            raise payload
        record: EpisodeRecord = payload
        self.records.append(record)
        metric = self.plan.success_metric
        reward = float(record.metrics.get(metric, 0.0)) if metric else 0.0
        info = {"metrics": dict(record.metrics), "outcome": record.outcome.value}
        return "", reward, True, False, info

    def _stop(self) -> None:
        """End an episode still waiting for an action (its record is not kept)."""
        if self._done or self._channel is None:
            return
        self._channel.actions.put(None)
        while True:
            kind, _ = self._channel.seen.get()
            if kind != "observation":
                break
            self._channel.actions.put(None)
        if self._thread is not None:
            self._thread.join()
        self._done = True

    def write_run(self, out: str | Path, *, quiet: bool = True) -> RunResult:
        """The episodes played so far as a run directory, summarised and reported like any run.

        Only an evaluation can be written: every task and trial played once, without per-step
        rewards. An environment that played a task twice (its best attempt would be reported)
        or handed the policy each step's score (a gold oracle on these very tasks) is a
        training environment, and its episodes are refused with a one-line usage error: make a
        fresh environment for the evaluation run."""
        if not self.records:
            raise UsageError("no finished episode to write")
        if self._step_reward is not None:
            raise UsageError(
                "this environment handed the policy each step's reward (step_rewards=True), a "
                "score of the very tasks it plays: its episodes are training, not a run; "
                "evaluate in a fresh environment without step_rewards"
            )
        played = Counter(r.key for r in self.records)
        again = sorted(key for key, n in played.items() if n > 1)
        if again:
            task, trial = again[0]
            raise UsageError(
                f"task {task} (trial {trial}) was played {played[again[0]]} times in this "
                f"environment ({len(again)} task(s) more than once): a run keeps one episode "
                "per task and trial, so it would report a chosen attempt; evaluate in a fresh "
                "environment, once per task"
            )
        by_key = {r.key: r for r in self.records}
        jobs = [EpisodeJob(r.task_id, r.trial, r.group) for r in by_key.values()]

        async def replay(job: EpisodeJob) -> EpisodeRecord:
            return by_key[job.key]

        plan = dataclasses.replace(self.plan, jobs=jobs, play=replay, aclose=None)
        return execute_plan(plan, Path(out), quiet=quiet, command=["todeval.gym", self.benchmark])


__all__ = ["CHARSET", "MAX_TEXT", "AgentEnv", "agent_role", "text"]
