"""Improving a policy offline with todeval's Gymnasium environment: a contextual bandit.

    python examples/gym_bandit.py --episodes 300 --out bandit.svg

The policy plays the booking benchmark's system role (``todeval/booking-v0``: the agenda user
and MultiWOZ's test goals behind the environment). Per episode it reads the user's opening
message, takes the domain it names as its context (restaurant, hotel, train, or other), and
picks one of three offline systems to play the whole episode -- the rule system and two floor
controls (``echo``, ``first-row``) -- by epsilon-greedy over the average booking accuracy each
system has earned in that context so far. The environment's reward is the episode's booking
accuracy, so the bandit learns which system to use where; the learning curve (the moving
average of the reward, and the share of episodes played by the best system) is written as an
SVG chart (axes, ticks, title, legend), with nothing but the standard library. Everything is
seeded: the same command draws the same goals and makes the same choices.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections import defaultdict
from html import escape
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


def write_svg(
    path: Path, series: list[tuple[str, list[float], str]], *, title: str, window: int
) -> None:
    """A line chart (values in [0, 1] per episode) as SVG: axes with ticks and labels, a title
    and a legend; standard library only."""
    width, height = 760, 400
    left, right, top, bottom = 64, 230, 48, 56
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max((len(v) for _, v, _ in series), default=1)

    def x(i: float) -> float:
        return left + plot_w * (i / max(n - 1, 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - v)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left + plot_w / 2}" y="24" text-anchor="middle" font-size="15">'
        f"{escape(title)}</text>",
    ]
    for k in range(6):  # y ticks 0.0 .. 1.0, with light grid lines
        v = k / 5
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v)}" y2="{y(v)}" '
                     'stroke="#e6e6e6"/>')  # fmt: skip
        parts.append(f'<line x1="{left - 5}" x2="{left}" y1="{y(v)}" y2="{y(v)}" stroke="black"/>')
        parts.append(f'<text x="{left - 8}" y="{y(v) + 4}" text-anchor="end">{v:.1f}</text>')
    step = max(1, round(n / 6 / 10) * 10) if n > 12 else 1
    for i in range(0, n, step):  # x ticks: the episode number
        parts.append(f'<line x1="{x(i)}" x2="{x(i)}" y1="{top + plot_h}" y2="{top + plot_h + 5}" '
                     'stroke="black"/>')  # fmt: skip
        parts.append(f'<text x="{x(i)}" y="{top + plot_h + 18}" text-anchor="middle">'
                     f"{i + 1}</text>")  # fmt: skip
    parts += [
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="black"/>',
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" '
        'stroke="black"/>',
        f'<text x="{left + plot_w / 2}" y="{height - 14}" text-anchor="middle">episode</text>',
        f'<text transform="translate(18 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"mean of the last {window} episodes</text>",
    ]
    for row, (label, values, colour) in enumerate(series):
        dash = ' stroke-dasharray="6 4"' if row else ""
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                     f'stroke-width="2"{dash}/>')  # fmt: skip
        ly = top + 16 + 20 * row
        lx = left + plot_w + 16
        parts.append(f'<line x1="{lx}" x2="{lx + 24}" y1="{ly}" y2="{ly}" stroke="{colour}" '
                     f'stroke-width="2"{dash}/>')  # fmt: skip
        parts.append(f'<text x="{lx + 30}" y="{ly + 4}">{escape(label)}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--window", type=int, default=30, help="moving-average window")
    parser.add_argument("--out", default="bandit.svg", help="the learning curve (SVG)")
    args = parser.parse_args(argv)
    rewards, best, values = learn(args.episodes, args.seed, args.epsilon)
    curve = moving_average(rewards, args.window)
    share = moving_average([float(b) for b in best], args.window)
    write_svg(
        Path(args.out),
        [("reward (booking accuracy)", curve, "#1f77b4"), ("best system's share", share, "#999")],
        title=f"Contextual bandit on todeval/booking-v0 ({args.episodes} episodes, seed "
        f"{args.seed})",
        window=args.window,
    )
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
