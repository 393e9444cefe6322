"""The Gymnasium example (examples/gym_bandit.py) learns offline and draws its curve (an SVG
chart with axes, ticks, a title and a legend)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gym_bandit.py"


def test_the_bandit_learns_to_pick_the_rule_system(tmp_path: Path) -> None:
    out = tmp_path / "curve.svg"
    argv = [sys.executable, str(EXAMPLE), "--episodes", "80", "--window", "20", "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    svg = out.read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2  # the two curves
    assert "Contextual bandit" in svg and "reward (booking accuracy)" in svg  # title, legend
    assert ">0.0<" in svg and ">1.0<" in svg and ">episode<" in svg  # ticks and axis labels
    first_line = done.stdout.splitlines()[0]  # "moving-average reward: A after 20 ... -> B ..."
    numbers = [float(w) for w in first_line.split() if "." in w and w.replace(".", "").isdigit()]
    start, end = numbers[0], numbers[1]
    assert end > start
    learned = [line for line in done.stdout.splitlines() if line.startswith("  ")]
    assert learned and all("rule 1.00" in line for line in learned)
