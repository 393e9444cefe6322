"""What a leaderboard site costs against checking its submissions one by one.

Plays the whole booking test set (117 tasks) with several offline systems, prepares each run
as a submission archive, then times (wall and the child's CPU) ``todeval submit verify`` on
every archive, one process each, and ``todeval leaderboard build`` on the folder of them. The
build verifies every archive the same way and writes each one's report (every transcript), so
the reference is the sum of the verifies: the ratio build CPU / sum of verify CPU is about 1
plus the reports' share (less the interpreter start-ups it saves). Prints the site's size
against the archives'. The CPU figures are the ones to read on a loaded machine. Asserts
nothing. Run:

    python bench/bench_leaderboard.py [--keep-bytecode] [--trials N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _proc import bytecode_env, timed

SYSTEMS = ("rule", "first-row", "copy-example", "echo")


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep-bytecode", action="store_true")
    parser.add_argument("--trials", type=int, default=1)
    args = parser.parse_args()
    env, cache = bytecode_env(args.keep_bytecode)
    todeval = [sys.executable, "-m", "todeval.cli"]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-leaderboard-") as tmp:
            subs = Path(tmp) / "submissions"
            subs.mkdir()
            verify_wall = verify_cpu = 0.0
            for system in SYSTEMS:
                out = Path(tmp) / system
                archive = subs / f"{system}.tar.gz"
                timed([*todeval, "run", "booking", "--system", system, "--trials",
                       str(args.trials), "--out", str(out), "--quiet"], env)  # fmt: skip
                timed([*todeval, "submit", "prepare", str(out), "-o", str(archive),
                       "--description", system], env)  # fmt: skip
                _, wall, cpu = timed([*todeval, "submit", "verify", str(archive)], env)
                verify_wall += wall
                verify_cpu += cpu
                print(f"verify {system:13s} {wall:6.2f} s wall, {cpu:6.2f} s CPU")
            site = Path(tmp) / "site"
            build = [*todeval, "leaderboard", "build", str(subs), "-o", str(site), "--quiet"]
            done, wall, cpu = timed(build, env)
            n = len(SYSTEMS)
            episodes = 117 * args.trials
            print(f"verify, {n} processes: {verify_wall:6.2f} s wall, {verify_cpu:6.2f} s CPU")
            print(f"leaderboard build:  {wall:6.2f} s wall, {cpu:6.2f} s CPU "
                  f"({n} submissions x {episodes} episodes)")  # fmt: skip
            print(f"ratio build CPU / sum of verify CPU = {cpu / verify_cpu:.2f}")
            big, small = _size(site), _size(subs)
            print(f"site {big / 1e6:.2f} MB for archives of {small / 1e6:.2f} MB "
                  f"(ratio {big / small:.1f}: every transcript as a page)")  # fmt: skip
            print(done.stdout.strip().splitlines()[-1])
    finally:
        if cache is not None:
            cache.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
