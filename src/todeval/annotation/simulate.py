"""Simulated annotators (tests, the docs' worked example): the gold itself, and noisy copies.

``python -m todeval.annotation.simulate ITEMS.jsonl NAME NOISE [SEED]`` writes
``ITEMS.answers.NAME.jsonl`` from the key next to the items.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from todeval.annotation.items import Answer, Item, key_path, read_items, read_key
from todeval.core.files import write_output


def simulate(items_path: Path, annotator: str, *, noise: float, seed: int) -> Path:
    """Write ``annotator``'s answer file: the gold answer, each candidate flipped with
    probability ``noise`` (never an empty or invalid answer)."""
    items = {i.id: i for i in read_items(items_path)}
    key = read_key(key_path(items_path))
    rng = random.Random(f"{annotator}|{seed}")
    out = items_path.with_name(f"{items_path.stem}.answers.{annotator}.jsonl")
    lines = []
    for item_id, item in items.items():
        choice = noisy(item, key[item_id], noise, rng)
        answer = Answer(item=item_id, annotator=annotator, choice=choice, export=items_path.stem)
        lines.append(answer.model_dump_json() + "\n")
    write_output(out, "".join(lines))
    return out


def noisy(item: Item, gold: frozenset[str], noise: float, rng: random.Random) -> list[str]:
    ids = [c.id for c in item.candidates]
    if not item.multiple:
        pick = next(iter(gold)) if rng.random() >= noise else rng.choice(item.choices())
        return [pick]
    chosen = [c for c in ids if (c in gold) != (rng.random() < noise)]
    return chosen or [rng.choice(ids)]


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print("usage: python -m todeval.annotation.simulate ITEMS.jsonl NAME NOISE [SEED]")
        return 2
    seed = int(argv[3]) if len(argv) == 4 else 0
    print(simulate(Path(argv[0]), argv[1], noise=float(argv[2]), seed=seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
