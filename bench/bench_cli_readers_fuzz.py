"""Every path the command line reads, fed hostile files: over 2,000 cases, each through
``main(argv)`` in process with a time limit. A case fails on a traceback, an exit code 1
(internal error), a hang, or a rejection that is not one ``todeval: error:`` line.

The arguments come from the parser itself (:func:`todeval.testing.cli_fuzz.path_arguments`:
every command's file and directory arguments), so a new reader is fuzzed without being listed.
Each gets every hostile kind (:data:`todeval.testing.cli_fuzz.HOSTILE`: a directory, a dangling
link, ``/dev/zero``, bytes that are not UTF-8, NULs, 100,000-deep JSON, JSONL, YAML and TOML,
run directories whose files are any of those) and ``--mutations`` seeded byte-level mutations.
CI runs a seeded subset (``tests/integrity/test_cli_readers_fuzz.py``).

Run: python bench/bench_cli_readers_fuzz.py [--mutations 18] [--seed 0] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integrity.fuzz import problem, run_main  # noqa: E402

from todeval.testing.cli_fuzz import HOSTILE, argv_for, hostile, mutated, path_arguments  # noqa: E402

ALLOWED = frozenset({0, 2, 3, 4, 5})


def limit_memory(gib: int = 6) -> None:
    """A case that tries to read without bound fails with MemoryError (exit 1, a failure)
    instead of taking the machine down."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))


def main() -> None:
    limit_memory()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mutations", type=int, default=18)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="arguments whose name contains this")
    parser.add_argument("--timeout", type=int, default=60)
    args = parser.parse_args()
    arguments = [a for a in path_arguments() if not args.only or args.only in a.name]
    codes: Counter[int | None] = Counter()
    failures: list[str] = []
    started = time.monotonic()
    n = 0
    with tempfile.TemporaryDirectory(prefix="todeval-cli-fuzz-") as tmp:
        for i, argument in enumerate(arguments):
            rng = random.Random(f"cli-fuzz:{args.seed}:{argument.name}")
            cases = [(kind, None) for kind in HOSTILE] + [
                (f"mutation-{m}", m) for m in range(args.mutations)
            ]
            for kind, m in cases:
                n += 1
                where = Path(tmp) / f"{i}-{kind}"
                where.mkdir()
                target = where / "input"
                value = mutated(rng, target) if m is not None else hostile(kind, target)
                outcome = run_main(argv_for(argument, value, where), timeout_s=args.timeout)
                codes[outcome.code] += 1
                found = problem(outcome, ALLOWED)
                if found:
                    tail = outcome.err.strip().splitlines()[-1:] or [""]
                    failures.append(f"{argument.name} [{kind}]: {found}: {tail[0][:200]}")
            print(f"[{i + 1}/{len(arguments)}] {argument.name}: {n} cases, "
                  f"{len(failures)} failures", file=sys.stderr, flush=True)  # fmt: skip
    seconds = time.monotonic() - started
    print(f"{n} cases over {len(arguments)} path arguments in {seconds:.0f} s; exit codes "
          + ", ".join(f"{c}: {k}" for c, k in sorted(codes.items(), key=str)))  # fmt: skip
    print(f"{len(failures)} failed (tracebacks, exit 1, hangs, not one error line)")
    for line in failures:
        print("  " + line)


if __name__ == "__main__":
    main()
