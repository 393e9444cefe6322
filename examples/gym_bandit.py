"""Improving a policy offline with todeval's Gymnasium environment: a contextual bandit.

    python examples/gym_bandit.py --episodes 300 --out bandit.png

The policy plays the booking benchmark's system role (``todeval/booking-v0``: the agenda user
and MultiWOZ's test goals behind the environment). Per episode it reads the user's opening
message, takes the domain it names as its context (restaurant, hotel, train, or other), and
picks one of three offline systems to play the whole episode -- the rule system and two floor
controls (``echo``, ``first-row``) -- by epsilon-greedy over the average booking accuracy each
system has earned in that context so far. The environment's reward is the episode's booking
accuracy, so the bandit learns which system to use where; the learning curve (the moving
average of the reward, and the share of episodes played by the best system) is written as a
PNG, with nothing but the standard library. Everything is seeded: the same command draws the
same goals and makes the same choices.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import struct
import sys
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import todeval.gym as tg
from todeval.benchmarks.booking.systems.controls import EchoSystem, FirstRowSystem
from todeval.benchmarks.booking.systems.rule import RuleSystem

ARMS: dict[str, Any] = {"rule": RuleSystem, "echo": EchoSystem, "first-row": FirstRowSystem}
DOMAINS = ("restaurant", "hotel", "train")


def context_of(opening: str) -> str:
    """The domain the user's first message names (the bandit's context)."""
    low = opening.lower()
    return next((d for d in DOMAINS if d in low or (d == "hotel" and "stay" in low)), "other")


def play(env: tg.AgentEnv, system: Any, info: dict[str, Any]) -> float:
    """One episode with ``system`` playing every turn; the episode's reward."""
    asyncio.run(system.start(info["view"]))
    while True:
        output = asyncio.run(system.respond(info["observation"]))
        _, reward, done, _, info = env.step(output.model_dump_json())
        if done:
            return float(reward)


def learn(
    episodes: int, seed: int, epsilon: float
) -> tuple[list[float], list[int], dict[str, dict[str, float]]]:
    """Rewards and best-arm choices per episode, and the learned values per context."""
    rng = random.Random(seed)
    env = tg.make("booking", {"protocol": "strict"})
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rewards, best = [], []
    for episode in range(episodes):
        observation, info = env.reset(seed=seed * 100_000 + episode)
        context = context_of(observation)
        means = {a: totals[context][a] / counts[context][a] for a in ARMS if counts[context][a]}
        untried = [a for a in ARMS if not counts[context][a]]
        if untried:
            arm = untried[0]
        elif rng.random() < epsilon:
            arm = rng.choice(list(ARMS))
        else:
            arm = max(means, key=lambda a: means[a])
        reward = play(env, ARMS[arm](), info)
        totals[context][arm] += reward
        counts[context][arm] += 1
        rewards.append(reward)
        best.append(int(arm == "rule"))
    env.close()
    values = {c: {a: totals[c][a] / counts[c][a] for a in ARMS if counts[c][a]} for c in totals}
    return rewards, best, values


def moving_average(values: list[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def write_png(path: Path, series: list[tuple[list[float], tuple[int, int, int]]]) -> None:
    """Lines (values in [0, 1]) over a white 640x320 canvas with axes, as a PNG file."""
    width, height, margin = 640, 320, 24
    pixels = [[(255, 255, 255)] * width for _ in range(height)]

    def dot(x: int, y: int, colour: tuple[int, int, int]) -> None:
        for dx in (0, 1):
            for dy in (0, 1):
                if 0 <= x + dx < width and 0 <= y + dy < height:
                    pixels[y + dy][x + dx] = colour

    for x in range(margin, width - margin):
        pixels[height - margin][x] = (0, 0, 0)
        pixels[margin][x] = (200, 200, 200)  # y = 1
    for y in range(margin, height - margin + 1):
        pixels[y][margin] = (0, 0, 0)
    for values, colour in series:
        n = max(len(values) - 1, 1)
        points = [
            (margin + round(i * (width - 2 * margin) / n),
             height - margin - round(v * (height - 2 * margin)))
            for i, v in enumerate(values)
        ]  # fmt: skip
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            steps = max(abs(x1 - x0), abs(y1 - y0), 1)
            for s in range(steps + 1):
                dot(x0 + (x1 - x0) * s // steps, y0 + (y1 - y0) * s // steps, colour)
    raw = b"".join(b"\0" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    path.write_bytes(png)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--window", type=int, default=30, help="moving-average window")
    parser.add_argument("--out", default="bandit.png", help="the learning curve (PNG)")
    args = parser.parse_args(argv)
    rewards, best, values = learn(args.episodes, args.seed, args.epsilon)
    curve = moving_average(rewards, args.window)
    share = moving_average([float(b) for b in best], args.window)
    write_png(Path(args.out), [(share, (160, 160, 160)), (curve, (31, 119, 180))])
    first, last = curve[min(args.window, len(curve)) - 1], curve[-1]
    print(
        f"moving-average reward: {first:.3f} after {args.window} episodes -> {last:.3f} "
        f"after {len(curve)}; best system's share of the last {args.window}: {share[-1]:.2f}"
    )
    for context in sorted(values):
        learned = ", ".join(f"{a} {v:.2f}" for a, v in sorted(values[context].items()))
        print(f"  {context}: {learned}")
    print(f"learning curve: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
