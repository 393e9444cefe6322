"""Whole-process time and peak memory of ``todeval score incar`` on very large prediction files.

Three files are built in a temporary directory from the test split's gold (every dialogue,
every turn, responses made of gold words):

* ``50mb``: about 50 MB, every response ~60,000 characters (before the response cap, such a
  file took 121 s and 5.8 GB; issue 16). It is now refused with one line, exit 3;
* ``1mb-response``: the gold with one response of 1,000,000 characters (was 46.8 s); refused;
* ``at-cap``: every one of the 808 responses exactly at the cap (10,000 characters, ~8 MB), the
  largest file that is still scored.

Each is scored in a fresh process (``python -m todeval.cli score incar FILE``); the wall time and
the peak RSS of that process (``ru_maxrss`` of the child) are printed, and as ratios to the
issue's bounds, 10 s and 1 GB (ratio <= 1 is within). Timings are never asserted: the machine
is shared, so the load average is printed with them.

Usage::

    python bench/bench_incar_large.py [--resamples 2000] [--only 50mb,1mb-response,at-cap]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TIME_BOUND_S = 10.0
RSS_BOUND_BYTES = 1 << 30
CAP = 10_000  # todeval.scoring.incar._predictions.MAX_RESPONSE_CHARS


def _gold_predictions(directory: Path) -> dict[str, list[dict[str, Any]]]:
    out = directory / "gold.json"
    command = [sys.executable, "-m", "todeval.cli", "data", "incar", "--export",
               "--predictions-format", "-o", str(out)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    data: dict[str, list[dict[str, Any]]] = json.loads(out.read_text("utf-8"))
    return data


def _text(words: list[str], size: int, rng: random.Random) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words)
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)[:size]


def _build(name: str, gold: dict[str, list[dict[str, Any]]], directory: Path) -> Path:
    rng = random.Random(0)
    words = [w for turns in gold.values() for t in turns for w in t["response"].split()]
    data = json.loads(json.dumps(gold))
    turns = [t for dialogue in data.values() for t in dialogue]
    if name == "50mb":
        size = 50_000_000 // len(turns)
        block = _text(words, size, rng)  # one block, varied by a prefix: building stays fast
        for i, turn in enumerate(turns):
            turn["response"] = f"{i} {block}"[:size]
    elif name == "1mb-response":
        turns[0]["response"] = _text(words, 1_000_000, rng)
    elif name == "at-cap":
        for turn in turns:
            turn["response"] = _text(words, CAP, rng)
    else:
        raise SystemExit(f"unknown case {name!r}")
    path = directory / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _score(path: Path, resamples: int) -> tuple[float, int, int, str]:
    """Wall time, peak RSS (bytes) of the scoring process, exit code, last stderr line."""
    command = [sys.executable, "-m", "todeval.cli", "score", "incar", str(path),
               "--resamples", str(resamples)]  # fmt: skip
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage (Linux: KiB)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    lines = stderr.strip().splitlines()
    return elapsed, usage.ru_maxrss * 1024, process.returncode, lines[-1] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--only", default="50mb,1mb-response,at-cap", help="cases to run")
    parser.add_argument("--build", nargs=2, metavar=("CASE", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        name, directory = args.build[0], Path(args.build[1])
        gold_file = directory / "gold.json"
        gold = (
            json.loads(gold_file.read_text("utf-8"))
            if gold_file.exists()
            else _gold_predictions(directory)
        )
        print(_build(name, gold, directory), end="")
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"todeval score incar on large files; cpus: {os.cpu_count()}; "
          f"load average before: {load:.2f}")  # fmt: skip
    print(f"bounds: {TIME_BOUND_S:.0f} s and {RSS_BOUND_BYTES / 2**30:.0f} GB per process\n")
    header = f"{'case':<14} {'file MB':>8} {'exit':>4} {'wall s':>7} {'/10 s':>6} {'peak MB':>8}"
    print(f"{header} {'/1 GB':>6}  message")
    with tempfile.TemporaryDirectory(prefix="todeval-incar-bench-") as tmp:
        directory = Path(tmp)
        for name in args.only.split(","):
            # built in a child process: this process stays small, so the scoring child's
            # peak RSS (which counts the pages it was forked with) is its own
            build = [sys.executable, __file__, "--build", name, str(directory)]
            path = Path(subprocess.run(build, check=True, capture_output=True, text=True).stdout)
            size_mb = path.stat().st_size / 1e6
            wall, rss, code, message = _score(path, args.resamples)
            print(f"{name:<14} {size_mb:>8.1f} {code:>4} {wall:>7.2f} "
                  f"{wall / TIME_BOUND_S:>6.2f} {rss / 1e6:>8.0f} {rss / RSS_BOUND_BYTES:>6.2f}  "
                  f"{message[:90]}")  # fmt: skip
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average after: {load_after:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
