"""Wall time of ``todeval score multiwoz`` on the six published prediction files.

Each file is scored in a fresh process (``python -m todeval.cli score multiwoz FILE
--metrics inform,success,bleu,richness``, with the documented quirk option for DoTS and
SOLOIST), several times; the median whole-process wall time is compared with the standard
evaluator's recorded time on this machine: median 14.9 s per file (AuGPT, 3 runs; recorded
figure, source: issue 5). Target: ratio >= 10x.

Usage::

    python bench/bench_multiwoz_score.py [--runs 3] [--serial] [--bytecode-cache]

``--bytecode-cache`` lets the subprocesses keep compiled bytecode in a temporary directory
(``PYTHONPYCACHEPREFIX``), as an installed package would have it; without it the environment
is used as it is (this container sets ``PYTHONDONTWRITEBYTECODE=1``, so every run recompiles
todeval's modules). The machine is shared: the load average is printed with the results, and
the CPU column (user + system seconds of the scoring process and its Moses child) shows the
work done, which other jobs disturb less than the wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from _proc import bytecode_env, timed

STANDARD_EVALUATOR_S = 14.9  # median per file, AuGPT, 3 runs (recorded figure, issue 5)
TARGET_RATIO = 10.0
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "multiwoz_predictions"
FILES = {
    "augpt": [],
    "damd": [],
    "dots": ["--active-domains", "state"],
    "galaxy-e2e": [],
    "hdsa": [],
    "soloist": ["--active-domains", "placeholders"],
}


def _run(path: Path, extra: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (all processes of the run) of one scoring process."""
    command = [sys.executable, "-m", "todeval.cli", "score", "multiwoz", str(path),
               "--metrics", "inform,success,bleu,richness", *extra]  # fmt: skip
    _, wall, cpu = timed(command, env)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per file (median reported)")
    parser.add_argument("--serial", action="store_true", help="pass --serial to the scorer")
    parser.add_argument(
        "--bytecode-cache", action="store_true", help="keep bytecode in a temporary directory"
    )
    args = parser.parse_args()

    env, cache = bytecode_env(args.bytecode_cache)
    extra_flags = ["--serial"] if args.serial else []

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"todeval score multiwoz: {args.runs} runs per file, median wall time per process")
    print(f"bytecode cache: {'yes' if cache else 'as the environment sets it'}; "
          f"child process for Moses: {'no' if args.serial else 'yes'}; "
          f"cpus: {os.cpu_count()}; load average before: {load:.2f}")  # fmt: skip
    print(f"standard evaluator (recorded): {STANDARD_EVALUATOR_S:.1f} s per file\n")
    print(f"{'file':<12} {'median s':>9} {'min s':>7} {'ratio':>7} {'CPU s':>7}")
    medians = []
    if cache:  # warm the bytecode cache once
        _run(FIXTURES / "augpt.json.gz", extra_flags, env)
    for name, options in FILES.items():
        runs = [
            _run(FIXTURES / f"{name}.json.gz", [*options, *extra_flags], env)
            for _ in range(args.runs)
        ]
        times = [wall for wall, _ in runs]
        median = statistics.median(times)
        cpu = statistics.median(c for _, c in runs)
        medians.append(median)
        ratio = STANDARD_EVALUATOR_S / median
        print(f"{name:<12} {median:>9.2f} {min(times):>7.2f} {ratio:>6.1f}x {cpu:>7.2f}")
    worst = max(medians)
    overall = statistics.median(medians)
    print(f"\nmedian over files: {overall:.2f} s -> {STANDARD_EVALUATOR_S / overall:.1f}x; "
          f"slowest file: {worst:.2f} s -> {STANDARD_EVALUATOR_S / worst:.1f}x "
          f"(target >= {TARGET_RATIO:.0f}x)")  # fmt: skip
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average after: {load_after:.2f}")
    if cache:
        cache.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
