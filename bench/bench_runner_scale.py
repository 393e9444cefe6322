"""Harness overhead and memory at scale (issue 4), printed as measured figures and ratios.

1. Overhead with a zero-latency backend: the ``monolithic`` system on the in-process scripted
   backend (no HTTP) with the agenda user; episodes per second and CPU time per model call.
2. Peak memory (max RSS of a fresh ``todeval run booking`` process) at 1k and 10k episodes
   with offline players (rule system, agenda user; 117 tasks x trials). Results stream to disk,
   so the 10k/1k ratio should stay near 1.

Reference (recorded before the dialogue-core refactor of issue 9, commit 3c15005, 2026-12-01,
this 2-core machine, three runs): 0.33 ms CPU per model call. The overhead line prints the
ratio to it (aim: at most 1.05).

Run: python bench/bench_runner_scale.py [--skip-memory]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from todeval.benchmarks.booking.run import SPEC, BookingConfig, RuntimeOptions
from todeval.runner.execute import execute_plan
from todeval.testing.booking_model import booking_script

REFERENCE_MS_PER_CALL = 0.33  # before the refactor (commit 3c15005, 2026-12-01)


def overhead(tmp: Path, trials: int) -> None:
    script = tmp / "script.json"
    script.write_text(booking_script().model_dump_json())
    config = BookingConfig(system="monolithic", system_model=f"scripted:{script}", trials=trials)
    plan = SPEC.plan(config, RuntimeOptions(cache=False))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    execute_plan(plan, tmp / "overhead", max_concurrency=64, quiet=True)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    episodes, calls = 0, 0
    for line in (tmp / "overhead" / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        episodes += 1
        calls += sum(u["calls"] for u in record["usage"].values())
    print(
        f"zero-latency backend: {episodes} episodes, {calls} model calls in {wall:.2f} s: "
        f"{episodes / wall:.0f} episodes/s, {1e3 * cpu / calls:.2f} ms CPU per call "
        f"(whole harness: game master, players, accounting, records); ratio to the "
        f"{REFERENCE_MS_PER_CALL} ms recorded before the refactor: "
        f"{1e3 * cpu / calls / REFERENCE_MS_PER_CALL:.2f} (aim <= 1.05)"
    )


def peak_rss_mb(tmp: Path, trials: int) -> tuple[float, float]:
    out = tmp / f"mem-{trials}"
    cmd = [
        sys.executable,
        "-c",
        "import resource, sys; from todeval.cli import main; code = main(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); "
        "sys.exit(code)",
        "run",
        "booking",
        "--trials",
        str(trials),
        "--out",
        str(out),
        "--quiet",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    return int(proc.stderr.strip().splitlines()[-1]) / 1024, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        overhead(tmp, trials=4)
        if args.skip_memory:
            return
        small_mb, small_s = peak_rss_mb(tmp, trials=9)  # 1,053 episodes
        large_mb, large_s = peak_rss_mb(tmp, trials=86)  # 10,062 episodes
        print(
            f"peak RSS: {small_mb:.0f} MB at 1,053 episodes ({small_s:.0f} s), "
            f"{large_mb:.0f} MB at 10,062 episodes ({large_s:.0f} s); "
            f"ratio 10k/1k = {large_mb / small_mb:.2f} (target: ~1, no growth beyond noise)"
        )


if __name__ == "__main__":
    main()
