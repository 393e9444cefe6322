"""``todeval score multiwoz`` against the standard MultiWOZ evaluator, paired, whole process.

For each prediction file, each run times both tools on the same uncompressed JSON, one right
after the other (alternating which goes first), so both see the same machine load:

* ours: ``python -m todeval.cli score multiwoz FILE.json --metrics inform,success,bleu,richness
  -o OUT.json`` (with the documented quirk option for DoTS and SOLOIST);
* the standard evaluator (Nekvinda & Dusek 2021, github.com/Tomiinek/MultiWOZ_Evaluation):
  ``python evaluate.py -i FILE.json -b -s -r -o OUT.json`` in its checkout. It is given the
  file as its own documented workflow needs it: DoTS without its ``active_domains`` (the quirk
  behind ``--active-domains state``), SOLOIST with the domains of its slot names (what its
  ``add_slot_domains.py`` produces; ``--active-domains placeholders`` here).

The whole-process ratio is the standard evaluator's wall time divided by ours, per run (then
the median over runs). Run ``i`` of every file gives both tools ``PYTHONHASHSEED=first + i``
(``--first-hash-seed``, default 0): the standard evaluator's time depends on it, because its
database query tests a venue's columns in the iteration order of a ``set`` of column names and
stops at the first mismatch, so the seed decides how often the slow fuzzy match runs (AuGPT,
seeds 0-8, paired runs on a quiet machine: 7.5-21.6 s, median 9.1 s; a profile of seed 3 vs
seed 4 counts 2,215,271 vs 374,752 ``partial_ratio`` calls). Users meet a random seed on every
run; fixed seeds make the comparison repeatable and sample that spread the same way for every
file and every version of our code; the in-process ratio times the same work inside an already
started process whose libraries are imported (data loading included, interpreter start-up and
imports not). Target: whole-process ratio >= 15x on every file. The CPU columns (user + system
seconds of our scorer and its child, the evaluator's, and the median ratio of the evaluator's
CPU time to ours) are less disturbed by other jobs on a shared machine than the wall times. The
figures of both tools are compared: Inform and Success (the standard evaluator rounds to one
decimal), BLEU, and the richness figures.

The standard evaluator is not on PyPI and its ``mwzeval/data`` needs the MultiWOZ 2.2 test
set: give a checkout with ``--standard-evaluator DIR`` and a Python that has its requirements
(``fuzzywuzzy``, ``python-Levenshtein``, ``lexical-diversity``, ``sacrebleu``,
``sacremoses``) with ``--standard-python``; ``mwzeval/data`` is filled from todeval's shipped
MultiWOZ data (goals, booked domains, MultiWOZ 2.2 references and gold states, the venue
database with the ``mutliple sports`` typo repaired as in the evaluator's own copy). Without
``--standard-evaluator`` the ratio is to the recorded figure of issue 5 (median 14.9 s per
file, AuGPT, 3 runs on this machine).

Usage::

    python bench/bench_multiwoz_score.py --standard-evaluator DIR --standard-python PY \\
        [--files augpt,dots,soloist] [--runs 9] [--first-hash-seed 0] [--in-process-runs 3] \\
        [--serial] [--bytecode-cache]

``--bytecode-cache`` lets the subprocesses of both tools keep compiled bytecode in a temporary
directory (``PYTHONPYCACHEPREFIX``), as installed packages have it; without it the environment
is used as it is (this container sets ``PYTHONDONTWRITEBYTECODE=1``, so every run recompiles
todeval's modules, and the evaluator's five). The machine is shared: the load average is
printed with the results.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from _proc import bytecode_env, child_cpu, timed

STANDARD_EVALUATOR_S = 14.9  # median per file, AuGPT, 3 runs (recorded figure, issue 5)
TARGET_RATIO = 15.0
METRICS = "inform,success,bleu,richness"
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "multiwoz_predictions"
OPTIONS = {
    "augpt": [],
    "damd": [],
    "dots": ["--active-domains", "state"],
    "galaxy-e2e": [],
    "hdsa": [],
    "soloist": ["--active-domains", "placeholders"],
}
_SLOT = re.compile(r"\[([\w\s\d]+)\]")
_DOMAINS = ("restaurant", "hotel", "attraction", "train", "taxi", "police", "hospital")

# In-process timers: the library is imported first, then one file is scored, data included.
_OURS_IN_PROCESS = """
import sys, time
from todeval.scoring.multiwoz import evaluate, to_summary
import numpy, rapidfuzz  # its libraries imported before timing, as on the other side
path, options = sys.argv[1], sys.argv[2:]
mode = options[1] if options else "given"
t0 = time.perf_counter()
result = evaluate(path, metrics=METRICS, active_domains=mode, parallel=True)
to_summary(result)
print(time.perf_counter() - t0)
""".replace("METRICS", repr(METRICS.split(",")))
_STANDARD_IN_PROCESS = """
import json, sys, time
from mwzeval.metrics import Evaluator
t0 = time.perf_counter()
with open(sys.argv[1]) as f:
    data = json.load(f)
Evaluator(True, True, True).evaluate(data)
print(time.perf_counter() - t0)
"""


def _read_data(name: str) -> Any:
    node = resources.files("todeval") / "data" / "multiwoz" / "corpus" / f"{name}.json.gz"
    return json.loads(gzip.decompress(node.read_bytes()))


def prepare_standard_data(checkout: Path) -> None:
    """Fill ``mwzeval/data`` of a standard-evaluator checkout from todeval's shipped data."""
    data = checkout / "mwzeval" / "data"
    (data / "references").mkdir(parents=True, exist_ok=True)
    (data / "database").mkdir(parents=True, exist_ok=True)
    for target, source in (
        (data / "goals.json", "goals_test"),
        (data / "booked_domains.json", "booked_domains_test"),
        (data / "gold_states.json", "gold_states_test_mwz22"),
        (data / "references" / "mwz22.json", "references_test_mwz22"),
    ):
        target.write_text(json.dumps(_read_data(source)), encoding="utf-8")
    db = resources.files("todeval") / "data" / "multiwoz" / "db"
    for domain in ("restaurant", "attraction", "hotel", "train"):
        rows = json.loads((db / f"{domain}_db.json").read_text(encoding="utf-8"))
        for row in rows:  # the evaluator's own copy has this typo repaired
            if row.get("type") == "mutliple sports":
                row["type"] = "multiple sports"
        (data / "database" / f"{domain}_db.json").write_text(json.dumps(rows), encoding="utf-8")


def _standard_input(name: str, predictions: dict[str, Any]) -> dict[str, Any]:
    """The file as the standard evaluator's workflow takes it (DoTS, SOLOIST: see above)."""
    if name not in ("dots", "soloist"):
        return predictions
    out: dict[str, Any] = {}
    for dialogue, turns in predictions.items():
        new_turns = []
        for turn in turns:
            turn = {k: v for k, v in turn.items() if k != "active_domains"}
            if name == "soloist":
                named = {s.split("_")[0] for s in _SLOT.findall(turn["response"].lower())}
                turn["active_domains"] = sorted(named & set(_DOMAINS))
            new_turns.append(turn)
        out[dialogue] = new_turns
    return out


def _seeded(env: dict[str, str], seed: int) -> dict[str, str]:
    """``env`` with Python's string hashing fixed to ``seed`` (see the module docstring)."""
    return {**env, "PYTHONHASHSEED": str(seed)}


def _ours(
    path: Path, name: str, out: Path, extra: list[str], env: dict[str, str]
) -> tuple[float, float]:
    """Wall and CPU seconds (the scorer and its child) of one of our runs."""
    command = [sys.executable, "-m", "todeval.cli", "score", "multiwoz", str(path),
               "--metrics", METRICS, "-o", str(out), *OPTIONS[name], *extra]  # fmt: skip
    _, wall, cpu = timed(command, env)
    return wall, cpu


def _standard(
    python: str, checkout: Path, path: Path, out: Path, env: dict[str, str]
) -> tuple[float, float]:
    """Wall and CPU seconds of one run of the standard evaluator."""
    command = [python, "evaluate.py", "-i", str(path), "-b", "-s", "-r", "-o", str(out)]
    cpu0, t0 = child_cpu(), time.perf_counter()
    done = subprocess.run(
        command, cwd=checkout, env=env, capture_output=True, text=True, check=False
    )
    wall, cpu = time.perf_counter() - t0, child_cpu() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"standard evaluator failed on {path}: {done.stderr.strip()[-500:]}")
    return wall, cpu


def _in_process(command: list[str], cwd: Path | None, env: dict[str, str] | None) -> float:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed: {done.stderr.strip()[-500:]}")
    return float(done.stdout.strip().splitlines()[-1])


def compare(ours_path: Path, standard_path: Path) -> list[str]:
    """Differences between the two tools' figures (empty when identical)."""
    ours = {k: v["micro"]["value"] for k, v in json.loads(ours_path.read_text())["metrics"].items()}
    std = json.loads(standard_path.read_text())
    pairs: list[tuple[str, float, float, float]] = [
        ("inform", round(ours["multiwoz.inform"], 1), std["success"]["inform"]["total"], 0.0),
        ("success", round(ours["multiwoz.success"], 1), std["success"]["success"]["total"], 0.0),
        ("bleu", ours["multiwoz.bleu"], std["bleu"]["mwz22"], 1e-9),
    ]
    richness = std["richness"]
    for ours_key, std_key, tolerance in (
        ("avg_length", "avg_lengths", 1e-9),
        ("entropy", "entropy", 1e-9),
        ("cond_entropy", "cond_entropy", 1e-9),
        ("msttr", "msttr", 1e-9),
        ("unique_words", "num_unigrams", 0.0),
        ("unique_bigrams", "num_bigrams", 0.0),
        ("unique_trigrams", "num_trigrams", 0.0),
    ):
        pairs.append(
            (ours_key, ours[f"multiwoz.richness.{ours_key}"], richness[std_key], tolerance)
        )
    return [f"{name}: ours {a!r}, standard {b!r}" for name, a, b, tol in pairs if abs(a - b) > tol]


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--standard-evaluator", type=Path, help="checkout of the standard evaluator"
    )
    parser.add_argument("--standard-python", default=sys.executable, help="Python to run it with")
    parser.add_argument("--files", default="augpt,dots,soloist", help="comma-separated names")
    parser.add_argument("--runs", type=int, default=9, help="paired whole-process runs per file")
    parser.add_argument(
        "--first-hash-seed", type=int, default=0, help="PYTHONHASHSEED of run 0 (run i: +i)"
    )
    parser.add_argument("--in-process-runs", type=int, default=3, help="in-process runs per file")
    parser.add_argument("--serial", action="store_true", help="pass --serial to our scorer")
    parser.add_argument(
        "--bytecode-cache", action="store_true", help="keep our bytecode in a temporary directory"
    )
    args = parser.parse_args()
    names = [n for n in args.files.split(",") if n]
    unknown = sorted(set(names) - set(OPTIONS))
    if unknown:
        parser.error(f"unknown files {unknown}; choose from {', '.join(OPTIONS)}")
    env, cache = bytecode_env(args.bytecode_cache)
    extra = ["--serial"] if args.serial else []
    checkout, std_python = args.standard_evaluator, args.standard_python
    if checkout is not None:
        if not (checkout / "evaluate.py").is_file():
            parser.error(f"{checkout} has no evaluate.py (a standard-evaluator checkout)")
        prepare_standard_data(checkout)

    seeds = [args.first_hash_seed + i for i in range(args.runs)]
    print(f"todeval score multiwoz vs the standard evaluator: {args.runs} paired runs per file "
          f"(PYTHONHASHSEED {seeds[0]}-{seeds[-1]}, one per pair), metrics {METRICS}; "
          f"our Moses child process: {'no' if args.serial else 'yes'}; "
          f"bytecode cache: {'yes' if cache else 'as the environment sets it'}; "
          f"cpus: {os.cpu_count()}; load average before: {_load():.2f}")  # fmt: skip
    if checkout is None:
        print(f"no --standard-evaluator: ratios are to the recorded {STANDARD_EVALUATOR_S} s\n")
    header = (
        f"{'file':<8} {'ours s':>7} {'std s':>7} {'whole':>7} {'min':>6} {'our CPU':>7} "
        f"{'std CPU':>7} {'CPU':>7} {'ours in':>8} {'std in':>7} {'in-proc':>8}  figures; "
        "std s range"
    )
    print("\n" + header)
    worst = float("inf")
    with tempfile.TemporaryDirectory(prefix="bench-mwz-") as tmp:
        work = Path(tmp)
        if cache:  # warm the bytecode cache once
            _ours(FIXTURES / "hdsa.json.gz", "hdsa", work / "warm.json", extra, env)
            if checkout is not None:
                warm = work / "warm.standard.json"
                warm.write_text(json.dumps({"sng0073": [{"response": "ok"}]}), encoding="utf-8")
                _standard(args.standard_python, checkout, warm, work / "warm.out.json", env)
        for name in names:
            predictions = json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))
            ours_in, std_in = work / f"{name}.json", work / f"{name}.standard.json"
            ours_in.write_text(json.dumps(predictions), encoding="utf-8")
            std_in.write_text(json.dumps(_standard_input(name, predictions)), encoding="utf-8")
            ours_out, std_out = work / f"{name}.ours.out.json", work / f"{name}.std.out.json"
            ours_runs: list[tuple[float, float]] = []
            std_runs: list[tuple[float, float]] = []
            for run, seed in enumerate(seeds):
                run_env = _seeded(env, seed)
                if checkout is None:
                    ours_runs.append(_ours(ours_in, name, ours_out, extra, run_env))
                    std_runs.append((STANDARD_EVALUATOR_S, float("nan")))
                elif run % 2 == 0:
                    ours_runs.append(_ours(ours_in, name, ours_out, extra, run_env))
                    std_runs.append(_standard(std_python, checkout, std_in, std_out, run_env))
                else:
                    std_runs.append(_standard(std_python, checkout, std_in, std_out, run_env))
                    ours_runs.append(_ours(ours_in, name, ours_out, extra, run_env))
            ratios = [s[0] / o[0] for s, o in zip(std_runs, ours_runs, strict=True)]
            cpu_ratio = statistics.median(
                s[1] / o[1] for s, o in zip(std_runs, ours_runs, strict=True)
            )
            ratio = statistics.median(ratios)
            worst = min(worst, ratio)
            ours_s = statistics.median(o[0] for o in ours_runs)
            std_s = statistics.median(s[0] for s in std_runs)
            ours_cpu = statistics.median(o[1] for o in ours_runs)
            std_cpu = statistics.median(s[1] for s in std_runs)
            line = (
                f"{name:<8} {ours_s:>7.2f} {std_s:>7.2f} {ratio:>6.1f}x {min(ratios):>5.1f}x "
                f"{ours_cpu:>7.2f} {std_cpu:>7.2f} {cpu_ratio:>6.1f}x"
            )
            if checkout is not None:
                ours_cmd = [sys.executable, "-c", _OURS_IN_PROCESS, str(ours_in), *OPTIONS[name]]
                std_cmd = [args.standard_python, "-c", _STANDARD_IN_PROCESS, str(std_in)]
                ours_ip, std_ip = [], []
                for i in range(args.in_process_runs):
                    run_env = _seeded(env, seeds[i % len(seeds)])
                    ours_ip.append(_in_process(ours_cmd, None, run_env))
                    std_ip.append(_in_process(std_cmd, checkout, run_env))
                in_ratio = statistics.median(s / o for s, o in zip(std_ip, ours_ip, strict=True))
                diffs = compare(ours_out, std_out)
                figures = "identical" if not diffs else "DIFFER: " + "; ".join(diffs)
                spread = [s[0] for s in std_runs]
                line += (f" {statistics.median(ours_ip):>8.2f} {statistics.median(std_ip):>7.2f}"
                         f" {in_ratio:>7.1f}x  {figures}; "
                         f"{min(spread):.1f}-{max(spread):.1f}")  # fmt: skip
            print(line, flush=True)
    verdict = "met" if worst >= TARGET_RATIO else "NOT met"
    print(
        f"\nworst file's whole-process ratio (median of paired runs): {worst:.1f}x; "
        f"target >= {TARGET_RATIO:.0f}x: {verdict}; load average after: {_load():.2f}"
    )
    if cache:
        cache.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
