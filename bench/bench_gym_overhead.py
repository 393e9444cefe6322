"""The Gymnasium environment's overhead per step against the runner's per system call.

Plays the rule system on the 117 booking test goals twice, in this process: as a player of the
run (``todeval.api.run``, one episode at a time) and as a policy driven through
``todeval.gym`` (``reset``, then one ``step`` per system output). Both play the same episodes
with the same streams (a test checks the records are equal), so the difference is what the
environment adds: a thread per episode, two queue hand-offs and the JSON of every action and
observation per step. Prints the time per system call of each and their ratio.
Run: python bench/bench_gym_overhead.py [--repeats N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import todeval.gym as tg
from todeval import api
from todeval.benchmarks.booking.systems.rule import RuleSystem


def runner_run(out: Path) -> tuple[float, int]:
    """Wall time and system calls of ``todeval run booking`` (rule, agenda), one at a time."""
    t0 = time.perf_counter()
    result = api.run("booking", {}, out=out, max_concurrency=1, review=False)
    wall = time.perf_counter() - t0
    calls = int(sum(m.micro.value * m.micro.n for k, m in result.summary.metrics.items()
                    if k == "booking.system_calls" and m.micro.value is not None))  # fmt: skip
    return wall, calls


def gym_run() -> tuple[float, int]:
    """Wall time and steps of the same episodes with the rule system driven through the env."""
    env = tg.make("booking", {})
    steps = 0
    t0 = time.perf_counter()
    for job in env.plan.jobs:
        _, info = env.reset(options={"task_id": job.task_id})
        policy = RuleSystem()
        asyncio.run(policy.start(info["view"]))
        done = False
        while not done:
            output = asyncio.run(policy.respond(info["observation"]))
            _, _, done, _, info = env.step(output.model_dump_json())
            steps += 1
    wall = time.perf_counter() - t0
    env.close()
    return wall, steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    best_runner, best_gym = float("inf"), float("inf")
    calls = steps = 0
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            wall, calls = runner_run(Path(tmp) / "run")
        best_runner = min(best_runner, wall / max(calls, 1))
        wall, steps = gym_run()
        best_gym = min(best_gym, wall / max(steps, 1))
    print(f"runner: {1e3 * best_runner:.3f} ms per system call ({calls} calls, best of "
          f"{args.repeats})")
    print(f"gym:    {1e3 * best_gym:.3f} ms per step ({steps} steps)")
    print(f"ratio gym/runner per call: {best_gym / best_runner:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
