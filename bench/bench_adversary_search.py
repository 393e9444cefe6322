"""The adversary search with a large budget: every family of every suite (or those named),
searched as ``todeval validate`` does in CI but with many more episodes, and the best agent
each search found beside its floor band (docs/validation.md, "How we attack our benchmarks").

For each family: the agents it holds, the points and episodes played, the best agent's
parameters and headline with its 95% CI, the band's upper end, and the ratio best / upper end
(a ratio above 1.00 is a FAIL: the family found an agent that scores without the skill).
The same search at CI's budget is printed beside it, so the two budgets can be compared.

Run: python bench/bench_adversary_search.py [SUITE ...] [--budget EPISODES] [--ci-budget]
     [--limit TASKS] [--all-tasks] [--seed S] [-o results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from todeval.registry import discover
from todeval.validation.command import load_suite, select_families, validate
from todeval.validation.search import AdversaryResult, describe


def _search(
    suite_name: str,
    budget: int | None,
    limit: int | None,
    seed: int,
    only: str | None,
    all_tasks: bool = False,
) -> list[AdversaryResult]:
    suite = load_suite(suite_name)
    families = select_families(suite, only)
    if not families:
        return []
    with tempfile.TemporaryDirectory(prefix="todeval-bench-search-") as tmp:
        report = validate(
            suite,
            (),
            seed=seed,
            limit=limit,
            workdir=Path(tmp),
            families=families,
            budget=budget,
            all_tasks=all_tasks,
            progress=lambda line: print(f"  {suite_name} {line}", file=sys.stderr, flush=True),
        )
    return report.adversaries


def _row(a: AdversaryResult, label: str) -> str:
    best = a.best
    if best is None or best.value is None:
        return (
            f"| {a.name} | {label} | {a.size} | {len(a.trials)} ({a.episodes}) | - | "
            f"error: {a.error} | {a.high:g} | - |"
        )
    ci = (
        f"{best.value:.3f} [{best.ci_low:.3f}, {best.ci_high:.3f}]"
        if best.ci_low is not None and best.ci_high is not None
        else f"{best.value:.3f}"
    )
    ratio = best.value / a.high if a.high > 0 else float("inf") if best.value > 0 else 0.0
    return (
        f"| {a.name} | {label} | {a.size} | {len(a.trials)} ({a.episodes}) | "
        f"{describe(best.params)} | {ci} | {a.high:g} | {ratio:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("suites", nargs="*", help="suites to search (default: every one)")
    parser.add_argument("--budget", type=int, default=2000, help="episodes per family (large)")
    parser.add_argument(
        "--ci-budget", action="store_true", help="also search at CI's budget (the family's own)"
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="tasks per point (default: the family's)"
    )
    parser.add_argument(
        "--all-tasks", action="store_true", help="every point plays every task (or --limit)"
    )
    parser.add_argument("--only", default=None, help="families by name or group")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", default=None, help="write every result as JSON")
    args = parser.parse_args()
    names = args.suites or sorted(discover().control_suites)
    rows = [
        "| family | budget | agents | points (episodes) | best agent found | headline [95% CI] "
        "| band high | best / high |",
        "|---|---|---|---|---|---|---|---|",
    ]
    dump: dict[str, list[dict[str, object]]] = {}
    for name in names:
        budgets: list[tuple[str, int | None]] = [("large", args.budget)]
        if args.ci_budget:
            budgets.insert(0, ("CI", None))
        for label, budget in budgets:
            started = time.monotonic()
            all_tasks = args.all_tasks and label == "large"
            found = _search(name, budget, args.limit, args.seed, args.only, all_tasks)
            for a in found:
                rows.append(_row(a, f"{label} ({a.budget})"))
                dump.setdefault(name, []).append(
                    {
                        "budget": label,
                        **a.model_dump(exclude={"trials"}),
                        "seconds": round(time.monotonic() - started, 1),
                    }
                )
    print("\n".join(rows))
    failed = [r["name"] for results in dump.values() for r in results if r.get("passed") is False]
    print(f"\n{len(failed)} famil{'y' if len(failed) == 1 else 'ies'} above the band: "
          + (", ".join(str(f) for f in failed) or "none"))  # fmt: skip
    if args.output:
        Path(args.output).write_text(json.dumps(dump, indent=2) + "\n")


if __name__ == "__main__":
    main()
