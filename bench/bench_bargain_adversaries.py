"""Bargaining: what a labeller gets without reading a word, per track and list setting.

For every setting of ``todeval.benchmarks.bargain.adversaries.SETTINGS`` (craigslist, casino,
scripted; uniform and hard distractors; the default K and ``--k 5``): micro F1 with its 95% CI
(bootstrap over dialogues) of the gold ceiling, the text-free baselines (``majority``, and
``prior``: the in-list prior at the turn's depth and speaker), the keyword baseline (reads the
words), the inverse-shuffle attacker, and the best text-blind learner the adversary search
finds within a budget (searched on ``--search-limit`` dialogues per point, the best point then
played on every dialogue). Every run draws its lists with the key ``validate`` uses at seed 0,
so all figures of a setting are on the same lists. The floor is the best text-free baseline
+ 0.02 (docs/validation.md).

Run: python bench/bench_bargain_adversaries.py [--settings craigslist,casino] [--budget N]
     [--search-limit N] [--skip-search] [-o results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from todeval import api
from todeval.benchmarks.bargain.adversaries import (
    MARGIN,
    SETTINGS,
    families,
    labeller_name,
    pinned,
    validation_key,
)


def f1(config: dict[str, Any], out: Path) -> tuple[float, float, float]:
    with pinned(validation_key(0)):  # the lists the search's points are scored on (seed 0)
        result = api.run("bargain", config, out=out, quiet=True, review=False)
    m = result.summary.metrics["bargain.f1"].micro
    assert m.value is not None and m.ci_low is not None and m.ci_high is not None
    return m.value, m.ci_low, m.ci_high


def cell(v: tuple[float, float, float] | None) -> str:
    return "-" if v is None else f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--budget", type=int, default=3000, help="episodes per family search")
    parser.add_argument("--search-limit", type=int, default=None, help="dialogues per point")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    from todeval.validation.search import run_family

    by_name = {f.name.rpartition("/")[2]: f for f in families()}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-bargain-adv-") as tmp:
        for setting in args.settings.split(","):
            run, _, _ = SETTINGS[setting]
            base = Path(tmp) / setting
            row: dict[str, Any] = {"setting": setting, "run": run}
            started = time.monotonic()
            for name in ("gold", "majority", "prior", "keyword"):
                row[name] = f1({**run, "labeller": name}, base / name)
            attack = {"learner": "inverse-shuffle", "features": "all", "emit": "auto"}
            row["inverse-shuffle"] = f1(
                {**run, "labeller": labeller_name(attack, run)}, base / "attack"
            )
            best_free = max(row["majority"][0], row["prior"][0])
            row["floor"] = best_free + MARGIN
            if not args.skip_search:
                family = by_name[setting]
                found = run_family(
                    family,
                    benchmark="bargain",
                    seed=0,
                    budget=args.budget,
                    limit=args.search_limit,
                    max_concurrency=8,
                    workdir=base / "search",
                    progress=lambda line: print("  " + line, file=sys.stderr, flush=True),
                )
                best = found.best
                row["searched"] = len(found.trials)
                if best is not None:
                    row["best_params"] = best.params
                    row["best"] = f1(
                        {**run, "labeller": labeller_name(best.params, run)}, base / "best"
                    )
            row["seconds"] = round(time.monotonic() - started, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    head = "| setting | gold | majority | prior (text-free) | keyword | inverse-shuffle | best "
    print(head + "learner found | floor |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        best = r.get("best")
        shown = f"{cell(best)} ({r.get('best_params')})" if best else "-"
        print(
            f"| {r['setting']} | {cell(r['gold'])} | {cell(r['majority'])} | {cell(r['prior'])} "
            f"| {cell(r['keyword'])} | {cell(r['inverse-shuffle'])} | {shown} | "
            f"{r['floor']:.3f} |"
        )
    if args.output:
        Path(args.output).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
