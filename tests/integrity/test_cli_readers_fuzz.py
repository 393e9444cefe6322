"""Every path the command line reads, fed hostile files (issue 42): the arguments come from the
parser itself (:func:`todeval.testing.cli_fuzz.path_arguments`), so a command added later is
covered without being listed. A seeded subset here -- three hostile kinds and one byte-level
mutation per argument, a different draw per argument -- and every kind with many mutations in
``bench/bench_cli_readers_fuzz.py`` (over 2,000 cases). No traceback, no exit 1, no hang; a
rejection is one ``todeval: error:`` line."""

from __future__ import annotations

import random
import resource
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from todeval.testing.cli_fuzz import HOSTILE, argv_for, hostile, mutated, path_arguments

from .fuzz import problem, run_main

ALLOWED = frozenset({0, 2, 3, 4, 5})
SEED = 0


@pytest.fixture(autouse=True)
def _bounded_memory() -> Iterator[None]:
    """A reader that reads without bound fails here with MemoryError (exit 1: a failure)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_the_parser_names_the_readers() -> None:
    names = {a.name for a in path_arguments()}
    assert len(names) >= 50
    for expected in ("score multiwoz PRED.json", "report RUN_DIR", "annotate agreement FILES",
                     "run booking --prompts", "data domain PACK", "compare RUN"):  # fmt: skip
        assert expected in names
    assert not any(n.endswith((" -o", " --output")) for n in names)  # outputs are written


def test_hostile_files_for_every_path_argument(tmp_path: Path) -> None:
    failures: list[str] = []
    codes: Counter[int | None] = Counter()
    for i, argument in enumerate(path_arguments()):
        rng = random.Random(f"cli-fuzz-ci:{SEED}:{argument.name}")
        kinds = rng.sample(sorted(HOSTILE), 3)
        for kind in [*kinds, "mutation"]:
            where = tmp_path / f"{i}-{kind}"
            where.mkdir()
            target = where / "input"
            value = mutated(rng, target) if kind == "mutation" else hostile(kind, target)
            outcome = run_main(argv_for(argument, value, where), timeout_s=60)
            codes[outcome.code] += 1
            found = problem(outcome, ALLOWED)
            if found:
                last = (outcome.err.strip().splitlines() or [""])[-1][:200]
                failures.append(f"{argument.name} [{kind}]: {found}: {last}")
    assert not failures, "\n".join(failures)
    assert codes[3] > sum(codes.values()) // 3, codes  # the cases do reach the readers
