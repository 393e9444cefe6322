"""Problem Weaver and the scripted track: generation speed and a 1,000-task run.

1. ``todeval data bargain --generate`` (the default 1,000-task template set) in a fresh
   process: tasks per second, and whether the output equals the shipped set.
2. ``todeval run bargain --track scripted`` over all 1,000 tasks, the llm labeller on a
   ``scripted:`` model (prompt rendering, the model layer, JSON checking, scoring) and the
   ``gold`` labeller (no model layer): turns per second, harness CPU per turn (user + system
   CPU of the child process) and the ratio between the two.

Speed figures live here, never in tests. Run: python bench/bench_bargain_scripted.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from _proc import timed


def _timed(cmd: list[str]) -> tuple[str, float, float]:
    done, wall, cpu = timed(cmd)
    return done.stdout, wall, cpu


def _run(tmp: Path, name: str, *args: str) -> tuple[int, float, float]:
    out = tmp / name
    _, wall, cpu = _timed(
        [
            sys.executable,
            "-m",
            "todeval.cli",
            "run",
            "bargain",
            "--track",
            "scripted",
            *args,
            "--no-cache",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    summary = json.loads((out / "summary.json").read_text())
    return int(summary["metrics"]["bargain.f1"]["micro"]["n"]), wall, cpu


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        printed, g_wall, g_cpu = _timed(
            [
                sys.executable,
                "-m",
                "todeval.cli",
                "data",
                "bargain",
                "--generate",
                "-o",
                str(tmp / "set.jsonl.gz"),
            ]
        )
        same = "identical to the shipped set" in printed
        print(
            f"generate the default set: 1000 tasks in {g_wall:.2f} s wall "
            f"({1000 / g_wall:.0f} tasks/s, whole process), CPU {g_cpu:.2f} s; "
            f"{'identical to' if same else 'DIFFERENT from'} the shipped set"
        )
        script = tmp / "script.json"
        script.write_text(json.dumps({"default": {"text": '{"labels": ["price.ask_discount"]}'}}))
        turns, wall, cpu = _run(tmp, "scripted", "--model", f"scripted:{script}")
        o_turns, o_wall, o_cpu = _run(tmp, "gold", "--labeller", "gold")
    print(
        f"scripted track, 1000 tasks, scripted model: {turns} turns in {wall:.2f} s wall "
        f"({turns / wall:.0f} turns/s), harness CPU {1000 * cpu / turns:.2f} ms/turn"
    )
    print(
        f"scripted track, 1000 tasks, gold labeller:  {o_turns} turns in {o_wall:.2f} s wall "
        f"({o_turns / o_wall:.0f} turns/s), harness CPU {1000 * o_cpu / o_turns:.2f} ms/turn"
    )
    print(f"ratio scripted/gold: wall {wall / o_wall:.2f}x, CPU per turn {cpu / o_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
