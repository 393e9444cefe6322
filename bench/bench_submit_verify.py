"""What checking a submission costs against playing it: `todeval submit verify` vs the run.

For each benchmark run below (offline built-in players), runs `todeval run` in a child process,
then `todeval submit prepare` and `todeval submit verify` on its archive, each timed (wall and
the child's CPU), and prints per run the archive's size against the run directory's, and
verify's CPU against the run's CPU (the replay plays every episode's world again, re-scores it
and re-computes the summary, so about one run's worth is the reference). The CPU figure is the
one to read on a loaded machine. Asserts nothing. Run:

    python bench/bench_submit_verify.py [--keep-bytecode]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _proc import bytecode_env, timed

RUNS = {
    "booking, rule + agenda, 117 tasks": ["booking"],
    "booking, rule + agenda, 117 tasks x 3 trials": ["booking", "--trials", "3"],
    "clarq, generic seeker + rule provider, 60 tasks": [
        "clarq", "--seeker", "generic", "--limit", "60",
    ],
    "bargain, scripted, copy-example labeller, 200 dialogues": [
        "bargain", "--track", "scripted", "--labeller", "copy-example", "--limit", "200",
    ],
}  # fmt: skip


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep-bytecode", action="store_true")
    args = parser.parse_args()
    env, cache = bytecode_env(args.keep_bytecode)
    todeval = [sys.executable, "-m", "todeval.cli"]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-submit-") as tmp:
            for i, (name, words) in enumerate(RUNS.items()):
                out = Path(tmp) / f"run-{i}"
                archive = Path(tmp) / f"run-{i}.tar.gz"
                run = [*todeval, "run", *words, "--out", str(out), "--quiet"]
                prepare = [*todeval, "submit", "prepare", str(out), "-o", str(archive),
                           "--description", "bench"]  # fmt: skip
                _, run_wall, run_cpu = timed(run, env)
                _, prep_wall, prep_cpu = timed(prepare, env)
                done, ver_wall, ver_cpu = timed([*todeval, "submit", "verify", str(archive)], env)
                share = archive.stat().st_size / _size(out)
                headline = done.stdout.splitlines()[0]
                print(f"{name}:")
                print(f"  run     {run_wall:6.2f} s wall, {run_cpu:6.2f} s CPU")
                print(f"  prepare {prep_wall:6.2f} s wall, {prep_cpu:6.2f} s CPU; archive "
                      f"{archive.stat().st_size / 1e6:.2f} MB = "
                      f"{share:.3f} of the run directory")  # fmt: skip
                print(f"  verify  {ver_wall:6.2f} s wall, {ver_cpu:6.2f} s CPU; "
                      f"ratio verify CPU / run CPU = {ver_cpu / run_cpu:.2f}")  # fmt: skip
                print(f"  {headline[:110]}")
    finally:
        if cache is not None:
            cache.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
