"""What ``--isolate`` costs (issue 45, point 6): the same seeker class played in the
evaluator's process and in the bubblewrap sandbox.

``tests.isolation.fixed_seeker:FixedSeeker`` (five questions, then goodbye) against the
``rule`` provider on the first N ClarQ test tasks, whole process (``todeval run clarq``), each
configuration run ``--repeats`` times, interleaved, median taken. Prints wall and CPU seconds,
the isolated / in-process ratio, and the extra cost per episode and per seeker call (the
sandbox starts once a run; every start view and every observation crosses a pipe as JSON).
Asserts nothing. Needs bubblewrap (``apt install bubblewrap``). Run from the repository root:

    python bench/bench_isolation.py [--tasks 52] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import timed

ROOT = Path(__file__).resolve().parents[1]
SEEKER = "tests.isolation.fixed_seeker:FixedSeeker"


def _one(out: Path, tasks: int, isolate: bool) -> tuple[float, float, int, int]:
    cmd = [sys.executable, "-m", "todeval", "run", "clarq", "--seeker", SEEKER]
    cmd += ["--provider", "rule", "--limit", str(tasks), "--out", str(out), "--quiet"]
    if isolate:
        cmd.append("--isolate")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    _, wall, cpu = timed(cmd, env)
    episodes = calls = 0
    for line in (out / "episodes.jsonl").read_text().splitlines():
        episodes += 1
        events = json.loads(line)["events"]
        calls += sum(1 for e in events if e.get("actor") == "seeker" and e.get("type") == "message")
    return wall, cpu, episodes, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=52)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.chdir(ROOT)
    runs: dict[bool, list[tuple[float, float, int, int]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="todeval-bench-iso-") as tmp:
        for r in range(args.repeats):
            for isolate in (False, True):
                out = Path(tmp) / f"{'iso' if isolate else 'in'}-{r}"
                runs[isolate].append(_one(out, args.tasks, isolate))
    med = {
        k: (statistics.median(w for w, *_ in v), statistics.median(c for _, c, *_ in v))
        for k, v in runs.items()
    }
    episodes, calls = runs[True][0][2], runs[True][0][3]
    print(
        f"{args.tasks} ClarQ tasks, {episodes} episodes, {calls} seeker turns; "
        f"median of {args.repeats} whole-process runs"
    )
    for isolate, label in ((False, "in-process"), (True, "isolated  ")):
        wall, cpu = med[isolate]
        print(f"  {label}: wall {wall:6.2f} s  CPU {cpu:6.2f} s")
    extra = med[True][0] - med[False][0]
    print(
        f"  ratio isolated / in-process: wall {med[True][0] / med[False][0]:.2f}, "
        f"CPU {med[True][1] / med[False][1]:.2f}"
    )
    print(
        f"  extra per episode: {1000 * extra / max(episodes, 1):.1f} ms "
        f"(per seeker turn {1000 * extra / max(calls, 1):.2f} ms; includes the sandbox's "
        "one start-up per run)"
    )


if __name__ == "__main__":
    main()
