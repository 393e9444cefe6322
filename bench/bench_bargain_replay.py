"""Bargaining: two replays that read the gold without a word (issue 41, round 2), before and after.

* **Annotation export.** ``todeval annotate export --from bargain:scripted`` used to draw its
  item lists under a public key (``public_key("annotation", 0)``): for each item, try every
  gold set of 1-3 of the shown candidates, redraw the list as if that were the gold, and keep
  the sets that reproduce it. ``before``: items drawn under the public key (as they were);
  ``after``: the items the export writes now (the installation's secret key).
* **Task-set hash.** A run over one dialogue published ``sha256`` of ``[id, scheme, [[index,
  gold, K]]]``: every single-act gold assignment of a craigslist dialogue tried against it.
  ``before``: the old content; ``after``: the run's manifest hash now (the gold committed under
  the whole track's gold digest).

Run: python bench/bench_bargain_replay.py [--items 300] [--dialogues 20]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import tempfile
import time
from pathlib import Path

from todeval.benchmarks.bargain.data import (
    LabelledTurn,
    candidates,
    labels_of,
    load_track,
    public_key,
)
from todeval.spec.build import task_set_hash


def replay(shown: list[str], dialogue_id: str, turn: LabelledTurn, labels: list[str]) -> set[str]:
    """The gold sets (1-3 labels) that redraw ``shown`` under the public key; their union's
    agreement is the answer (empty: none reproduces it)."""
    from dataclasses import replace

    found: list[set[str]] = []
    for g in (1, 2, 3):
        for gold in itertools.combinations(shown, g):
            fake = replace(turn, gold=tuple(gold))
            if candidates(dialogue_id, fake, labels, 20, 0, public_key("annotation", 0)) == shown:
                found.append(set(gold))
    return found[0] if len(found) == 1 else set()


def f1(pairs: list[tuple[set[str], set[str]]]) -> float:
    tp = sum(len(p & g) for p, g in pairs)
    pred = sum(len(p) for p, _ in pairs)
    gold = sum(len(g) for _, g in pairs)
    prec, rec = tp / max(pred, 1), tp / max(gold, 1)
    return 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def annotation(n: int) -> dict[str, float]:
    from todeval.benchmarks.bargain.annotation import items

    labels = list(labels_of("scripted"))
    turns = {(d.dialogue_id, t.index): t for d in load_track("scripted", "test") for t in d.turns}
    now = items("scripted", {})[:n]
    out: dict[str, float] = {"items": float(len(now))}
    for mode in ("before", "after"):
        pairs = []
        for g in now:
            dialogue_id, _, index = g.item.id.rpartition(":")
            turn = turns[(dialogue_id, int(index))]
            shown = [c.id for c in g.item.candidates]
            if mode == "before":
                shown = candidates(dialogue_id, turn, labels, 20, 0, public_key("annotation", 0))
            pairs.append((replay(shown, dialogue_id, turn, labels), set(g.gold)))
        out[f"{mode}_f1"] = f1(pairs)
        out[f"{mode}_recovered"] = float(sum(p == g for p, g in pairs))
    return out


def brute(target: str, dialogue_id: str, shape: list[tuple[int, int]], labels: list[str]) -> bool:
    for golds in itertools.product(labels, repeat=len(shape)):
        content = [
            dialogue_id,
            "keyed-v2",
            [[i, [g], n] for (i, n), g in zip(shape, golds, strict=True)],
        ]
        if task_set_hash([content]) == target:
            return True
    return False


def hashes(n: int) -> dict[str, float]:
    from todeval import api

    labels = list(labels_of("craigslist"))
    chosen = [d for d in load_track("craigslist", "test") if len(d.turns) <= 4][:n]
    before = after = 0
    seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for d in chosen:
            shape = [(t.index, len(labels)) for t in d.turns]
            turns = [[i, list(t.gold), k] for (i, k), t in zip(shape, d.turns, strict=True)]
            old = [d.dialogue_id, "keyed-v2", turns]
            started = time.perf_counter()
            before += brute(task_set_hash([old]), d.dialogue_id, shape, labels)
            seconds += time.perf_counter() - started
            config = {"track": "craigslist", "labeller": "majority", "ids": [d.dialogue_id]}
            api.run("bargain", config, out=Path(tmp) / d.dialogue_id, quiet=True, review=False)
            manifest = json.loads((Path(tmp) / d.dialogue_id / "manifest.json").read_text())
            after += brute(manifest["task_set_hash"], d.dialogue_id, shape, labels)
    return {
        "dialogues": float(len(chosen)),
        "before_recovered": float(before),
        "before_seconds_each": seconds / max(len(chosen), 1),
        "after_recovered": float(after),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--dialogues", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TODEVAL_CACHE_DIR"] = cache  # its own installation secret
        print(json.dumps({"annotation": annotation(args.items)}), flush=True)
        print(json.dumps({"task_set_hash": hashes(args.dialogues)}), flush=True)


if __name__ == "__main__":
    main()
