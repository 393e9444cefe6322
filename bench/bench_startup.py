"""Whole-process time of ``todeval --help`` against two baselines.

Each command runs in a fresh process, alternating between them, several times; the median wall
time of each is reported, and ``todeval --help`` as a ratio to ``python -c pass`` (the
interpreter alone) and to ``python -c "import pydantic"`` (the one library every plug-in's
registration needs). Aim (issue 16): ``todeval --help`` at most 2x ``import pydantic``. The
modules of numpy, sacrebleu, scipy and pandas that ``todeval --help`` left loaded are listed
(there should be none: plug-ins register lazily).

Usage::

    python bench/bench_startup.py [--runs 15] [--bytecode-cache]

``--bytecode-cache`` lets the subprocesses keep compiled bytecode in a temporary directory
(``PYTHONPYCACHEPREFIX``), as an installed package would have it; without it the environment
is used as it is (this container sets ``PYTHONDONTWRITEBYTECODE=1``, so every ``todeval``
process recompiles todeval's modules: the figure is then mostly compile time). The machine is
shared: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from _proc import bytecode_env, timed

AIM = 2.0  # todeval --help / import pydantic
HEAVY = ("numpy", "sacrebleu", "scipy", "pandas")
PROBE = (
    "import sys\n"
    "from todeval.cli import main\n"
    "try:\n"
    "    main(['--help'])\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
)


def _time(command: list[str], env: dict[str, str]) -> float:
    return timed(command, env)[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (median)")
    parser.add_argument(
        "--bytecode-cache", action="store_true", help="keep bytecode in a temporary directory"
    )
    args = parser.parse_args()

    env, cache = bytecode_env(args.bytecode_cache)
    python = sys.executable
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import pydantic'": [python, "-c", "import pydantic"],
        "todeval --help": [python, "-c", "from todeval.cli import main; main(['--help'])"],
    }
    heavy = subprocess.run(
        [python, "-c", PROBE], env=env, capture_output=True, text=True, check=False
    ).stderr.strip()  # also warms the bytecode cache
    for command in commands.values():
        _time(command, env)  # warm the file cache
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            times[name].append(_time(command, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"whole-process wall time, median of {args.runs} runs each (alternating)")
    print(f"bytecode cache: {'yes' if cache else 'as the environment sets it'}; "
          f"cpus: {os.cpu_count()}; load average before: {load:.2f}\n")  # fmt: skip
    for name, median in medians.items():
        print(f"{name:<30} {median * 1000:>8.1f} ms  (min {min(times[name]) * 1000:.1f} ms)")
    help_s = medians["todeval --help"]
    vs_pass = help_s / medians["python -c pass"]
    vs_pydantic = help_s / medians["python -c 'import pydantic'"]
    print(f"\ntodeval --help / python -c pass:          {vs_pass:.2f}x")
    print(f"todeval --help / python -c 'import pydantic': {vs_pydantic:.2f}x (aim <= {AIM:.0f}x)")
    print(f"heavy modules loaded by todeval --help: {heavy or 'none'}")
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average after: {load_after:.2f}")
    if cache:
        cache.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
