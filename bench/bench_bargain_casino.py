"""Harness cost of a bargain run: all 4,615 annotated CaSiNo utterances (``--split all``).

Runs `todeval run bargain --track casino --split all` in a fresh process twice -- the llm
labeller on a ``scripted:`` model (prompt rendering, the model layer, JSON checking, scoring)
and the ``gold`` labeller (no model layer) -- and prints turns per second, harness CPU per turn
(user + system CPU of the child process) and the ratio between the two. Speed figures live here,
never in tests. Run: python bench/bench_bargain_casino.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from _proc import timed


def _run(tmp: Path, name: str, *args: str) -> tuple[int, float, float]:
    out = tmp / name
    cmd = [sys.executable, "-m", "todeval.cli", "run", "bargain", "--track", "casino",
           "--split", "all", *args, "--no-cache", "--out", str(out), "--quiet"]  # fmt: skip
    _, wall, cpu = timed(cmd)
    summary = json.loads((out / "summary.json").read_text())
    return int(summary["metrics"]["bargain.f1"]["micro"]["n"]), wall, cpu


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        script = tmp / "script.json"
        script.write_text(json.dumps({"default": {"text": '{"labels": ["self-need"]}'}}))
        turns, wall, cpu = _run(tmp, "scripted", "--model", f"scripted:{script}")
        g_turns, g_wall, g_cpu = _run(tmp, "gold", "--labeller", "gold")
    print(
        f"casino --split all, scripted model: {turns} turns in {wall:.2f} s wall "
        f"({turns / wall:.0f} turns/s), harness CPU {1000 * cpu / turns:.2f} ms/turn"
    )
    print(
        f"casino --split all, gold labeller:  {g_turns} turns in {g_wall:.2f} s wall "
        f"({g_turns / g_wall:.0f} turns/s), harness CPU {1000 * g_cpu / g_turns:.2f} ms/turn"
    )
    print(f"ratio scripted/gold: wall {wall / g_wall:.2f}x, CPU per turn {cpu / g_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
