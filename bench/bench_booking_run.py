"""Wall time of the README's first command: the full offline booking run (117 test episodes).

Runs `todeval run booking` (rule system, agenda user) in a fresh process into a temporary
directory and prints the wall time, the time per episode, and the ratio to a one-minute budget
(the issue's "well under a minute" target). Run: python bench/bench_booking_run.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 60.0


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "todeval.cli", "run", "booking", "--out", str(out), "--quiet"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        summary = json.loads((out / "summary.json").read_text())
    n = summary["n_episodes"]
    acc = summary["metrics"]["booking.booking_accuracy"]["micro"]["value"]
    print(
        f"booking run (rule + agenda, test set): {n} episodes in {wall:.2f} s wall "
        f"({1000 * wall / n:.1f} ms/episode, booking accuracy {acc:.3f})"
    )
    print(f"ratio to the {BUDGET_S:.0f} s budget: {BUDGET_S / wall:.1f}x under budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
