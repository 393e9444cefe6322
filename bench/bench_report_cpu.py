"""`todeval report` at leaderboard scale: CPU, peak memory and page size (issue 43, item 3).

Builds 100 synthetic booking runs of 1,000 episodes each with the builder of
``bench/bench_report_scale.py`` (real episodes of `todeval run booking`, rule system against the
agenda and corpus user simulators, re-used under new task ids with per-run failure rates from
5% to 65%; ~780 MB of episodes), then runs ``todeval report RUN... -o report.html`` (default
transcripts: 50 per run) in a child process and prints, each against its budget:

* the child's CPU time, user + system, from start-up to exit (budget 15 s);
* its peak memory (``ru_maxrss``; budget 400 MB);
* the page's size (budget 40 MB).

``--old-records`` measures the same runs as a todeval before 0.3 wrote them: successes carry no
stored verdict, so the "Who failed" section has the benchmark's reviewer review each of them
(failures keep theirs). ``--src DIR`` measures the todeval whose package is under ``DIR/src``
instead (e.g. ``git archive <commit> src | tar -x -C DIR``), for a before/after pair on the same
runs; ``--against DIR`` measures this checkout and the todeval under ``DIR/src`` in turn,
``--repeat`` times each (alternating, so both see the same machine load), and prints the
ratios this / that. ``--keep DIR`` writes the runs there (or reuses them) rather than a
temporary directory. Prints "ratio = measured / budget" lines; asserts nothing. Run:

    python bench/bench_report_cpu.py [--runs 100] [--episodes 1000] [--repeat 1]
    python bench/bench_report_cpu.py --keep RUNS --against OLD --repeat 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_report_scale import generate

BUDGET_CPU_S = 15.0
BUDGET_RSS_MB = 400.0
BUDGET_HTML_MB = 40.0

_CHILD = (
    "import resource, sys\n"
    "from todeval.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def _ratio(label: str, measured: float, budget: float, unit: str) -> None:
    print(
        f"  {label:<46} {measured:9.2f} {unit:<2} budget {budget:6.1f} {unit:<2} "
        f"ratio = {measured / budget:.3f}"
    )


def _strip_success_verdicts(src: Path, dst: Path) -> None:
    """``src``'s runs as written before successes carried a verdict (``review`` dropped)."""
    for run in sorted(p for p in src.iterdir() if (p / "manifest.json").exists()):
        out = dst / run.name
        out.mkdir(parents=True, exist_ok=True)
        for name in ("manifest.json", "summary.json"):
            (out / name).write_bytes((run / name).read_bytes())
        with (
            (run / "episodes.jsonl").open(encoding="utf-8") as fh,
            (out / "episodes.jsonl").open("w", encoding="utf-8") as w,
        ):
            for line in fh:
                record = json.loads(line)
                if record["outcome"] == "success":
                    record.pop("review", None)
                w.write(json.dumps(record, separators=(",", ":")) + "\n")


def _report(runs: list[Path], out: Path, src: str | None) -> tuple[float, float, float, float]:
    """(CPU s, peak MB, HTML MB, wall s) of one ``todeval report`` child."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve() / "src")
    argv = [sys.executable, "-c", _CHILD, "report", *map(str, runs), "-o", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"todeval report failed ({proc.returncode}): {proc.stderr.strip()}")
    cpu, maxrss_kb = proc.stderr.strip().splitlines()[-1].split()
    return float(cpu), int(maxrss_kb) / 1024, out.stat().st_size / 1e6, wall


def measure(root: Path, tmp: Path, args: argparse.Namespace) -> None:
    runs = sorted(p for p in root.iterdir() if (p / "manifest.json").exists())
    n = sum(1 for run in runs for _ in (run / "episodes.jsonl").open("rb"))
    data_mb = sum((r / "episodes.jsonl").stat().st_size for r in runs) / 1e6
    which = f"todeval from {args.src}/src" if args.src else "this checkout's todeval"
    kind = "successes without a stored verdict" if args.old_records else "records as run today"
    print(f"{len(runs)} runs, {n:,} episodes, {data_mb:,.0f} MB of episodes ({kind}); {which}")
    results = [_report(runs, tmp / "report.html", args.src) for _ in range(args.repeat)]
    cpu = statistics.median(r[0] for r in results)
    rss = statistics.median(r[1] for r in results)
    html, wall = results[-1][2], statistics.median(r[3] for r in results)
    each = ", ".join(f"{r[0]:.1f}" for r in results)
    print(
        f"todeval report {len(runs)} runs -o report.html: CPU {each} s (median {cpu:.1f}), "
        f"wall {wall:.1f} s, peak {rss:,.0f} MB, page {html:.1f} MB"
    )
    print("measured against budgets (issue 43, item 3):")
    _ratio("CPU, whole process (user + system)", cpu, BUDGET_CPU_S, "s")
    _ratio("peak memory (maxrss)", rss, BUDGET_RSS_MB, "MB")
    _ratio("HTML size, default transcripts (50 per run)", html, BUDGET_HTML_MB, "MB")
    print(f"  per 1,000 episodes: {cpu / n * 1000:.3f} s CPU")


def paired(root: Path, tmp: Path, args: argparse.Namespace) -> None:
    """This checkout and ``--against``'s todeval in turn, ``--repeat`` times each."""
    runs = sorted(p for p in root.iterdir() if (p / "manifest.json").exists())
    ours: list[tuple[float, float, float, float]] = []
    theirs: list[tuple[float, float, float, float]] = []
    for _ in range(args.repeat):
        ours.append(_report(runs, tmp / "ours.html", None))
        theirs.append(_report(runs, tmp / "theirs.html", args.against))
    print(f"{len(runs)} runs; this checkout vs todeval from {args.against}/src, alternating:")
    names = ("CPU (s)", "peak memory (MB)", "page (MB)", "wall (s)")
    for i, name in enumerate(names):
        a = statistics.median(r[i] for r in ours)
        b = statistics.median(r[i] for r in theirs)
        each = " / ".join(f"{r[i]:.1f}" for r in ours), " / ".join(f"{r[i]:.1f}" for r in theirs)
        print(f"  {name:<17} this {each[0]:<20} that {each[1]:<20} ratio this/that = {a / b:.3f}")
    cpu = statistics.median(r[0] for r in ours)
    rss = statistics.median(r[1] for r in ours)
    print("this checkout against budgets (issue 43, item 3):")
    _ratio("CPU, whole process (user + system)", cpu, BUDGET_CPU_S, "s")
    _ratio("peak memory (maxrss)", rss, BUDGET_RSS_MB, "MB")
    _ratio("HTML size, default transcripts (50 per run)", ours[-1][2], BUDGET_HTML_MB, "MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples")
    parser.add_argument("--repeat", type=int, default=1, help="reports to time (median)")
    parser.add_argument("--keep", metavar="DIR", help="write (or reuse) the runs here")
    parser.add_argument("--old-records", action="store_true", help="successes without verdicts")
    parser.add_argument("--src", metavar="DIR", help="measure the todeval under DIR/src")
    parser.add_argument("--against", metavar="DIR", help="pair with the todeval under DIR/src")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        root = Path(args.keep) if args.keep else tmp / "runs"
        if not (root.is_dir() and any(root.glob("*/manifest.json"))):
            t0 = time.perf_counter()
            generate(root, args.runs, args.episodes, args.resamples)
            print(f"wrote the runs in {time.perf_counter() - t0:.0f} s")
        if args.old_records:
            old = tmp / "old"
            _strip_success_verdicts(root, old)
            root = old
        if args.against:
            paired(root, tmp, args)
        else:
            measure(root, tmp, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
