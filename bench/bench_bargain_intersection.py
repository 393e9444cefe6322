"""Bargaining: what an agent that remembers candidate lists across runs gets (issue 41, round 2).

Every list holds the gold. If each run drew a fresh key (the first fix of issue 41), each run
showed a new list holding the gold, and an agent remembering the lists of a turn across runs
could intersect them until little but the gold was left. This bench plays ``--runs`` runs of
every setting with such an agent -- the in-list prior (``prior``, fitted like the baselines)
ranking only the labels that were in *every* list it has seen for the turn -- and prints its F1
per run, twice: ``fresh`` (every run under a new random key: the behaviour before) and
``stable`` (every run under the installation's key: now). Lists are the same in every stable
run, so the agent's F1 stays the in-list prior's.

Run: python bench/bench_bargain_intersection.py [--runs 6] [--settings craigslist-k5,...]
     [--limit N] [-o results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from todeval import api
from todeval.benchmarks.bargain.adversaries import SETTINGS, pinned
from todeval.benchmarks.bargain.data import new_key
from todeval.benchmarks.bargain.labellers import LabelOutput, TurnView
from todeval.benchmarks.bargain.textfree import PriorLabeller

DEFAULT_SETTINGS = ("craigslist-k5", "casino-k5", "scripted", "scripted-k5", "scripted-hard")


class Intersecting(PriorLabeller):
    """The in-list prior over the labels of every list seen for the turn, across runs (its
    memory outlives a run: a class attribute of this process, as a file would)."""

    memory: ClassVar[dict[str, list[str]]] = {}

    async def respond(self, observation: TurnView) -> LabelOutput:
        key = f"{self.context.dialogue_id}#{observation.index}"
        before = set(self.memory.get(key, observation.candidates))
        common = [c for c in observation.candidates if c in before]
        self.memory[key] = common
        return await super().respond(observation.model_copy(update={"candidates": common}))


def f1(config: dict[str, Any], out: Path) -> float:
    result = api.run("bargain", config, out=out, quiet=True, review=False)
    value = result.summary.metrics["bargain.f1"].micro.value
    assert value is not None
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default=",".join(DEFAULT_SETTINGS))
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-bargain-intersect-") as tmp:
        os.environ["TODEVAL_CACHE_DIR"] = str(Path(tmp) / "cache")  # its own installation secret
        for setting in args.settings.split(","):
            run = dict(SETTINGS[setting][0])
            config: dict[str, Any] = {**run, "labeller": f"{__name__}:Intersecting"}
            if args.limit:
                config["limit"] = args.limit
            prior = f1({**config, "labeller": "prior"}, Path(tmp) / setting / "prior")
            row: dict[str, Any] = {"setting": setting, "prior": prior}
            started = time.monotonic()
            for mode in ("fresh", "stable"):
                Intersecting.memory = {}
                scores = []
                for i in range(args.runs):
                    out = Path(tmp) / setting / f"{mode}-{i}"
                    if mode == "fresh":
                        with pinned(new_key()):
                            scores.append(f1(config, out))
                    else:
                        scores.append(f1(config, out))
                row[mode] = scores
            row["seconds"] = round(time.monotonic() - started, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"| setting | in-list prior | fresh key per run: runs 1..{args.runs} | stable key |")
    print("|---|---|---|---|")
    for r in rows:
        fresh = " / ".join(f"{v:.3f}" for v in r["fresh"])
        stable = " / ".join(f"{v:.3f}" for v in r["stable"])
        print(f"| {r['setting']} | {r['prior']:.3f} | {fresh} | {stable} |")
    if args.output:
        Path(args.output).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
