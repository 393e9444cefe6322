"""The booking adversaries, measured (issue 41; docs/validation.md "How we attack our benchmarks").

Plays named points of the skill-less family (``benchmarks/booking/adversaries.py``) and, with
``--search EPISODES``, the best agent ``todeval validate``'s search finds in each declared
family, on MultiWOZ's 117 test goals and the car-rental pack under both protocols against the
agenda user: booking accuracy and Inform with their 95% CIs, and the ratio Inform on the pack
/ Inform on MultiWOZ for the same agent (the floor: at most 1.5). Then the rule system's
attributes metric on every shipped pack and on the clinic docs/own-domain.md builds, and its
n on MultiWOZ's test goals (none request an attribute: not applicable).

The search's best on the pack is the point the search picked *because* it scored highest there,
so its ratio to MultiWOZ carries the pick's luck; ``--sample N`` plays N points of the family
drawn at random (seeded, not picked) on both places under both protocols and prints the
family's mean Inform on each and their ratio, the same agents on both sides.

Run: python bench/bench_booking_adversaries.py [--search EPISODES] [--sample N] [--seed S]
[-o results.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from todeval import api
from todeval.core.records import Summary
from todeval.dialogue.participants import with_params

ROOT = Path(__file__).resolve().parents[1]
AGENTS: dict[str, dict[str, Any]] = {
    # the three: copy schema values into the arguments; book every row seen with
    # made-up details; book every returned row
    "parrot": {"strategy": "parrot", "book_when": "asked", "reply": "booked"},
    "enumerator": {"strategy": "enumerate", "rows": 5, "book_when": "every", "reply": "booked"},
    "parrot, every row": {"strategy": "parrot", "rows": 5, "book_when": "every", "reply": "booked"},
    "ask-all": {"strategy": "ask-all", "book_when": "asked", "reply": "booked"},
}
PLACES: tuple[tuple[str, str | None], ...] = (("MultiWOZ test", None), ("car-rental", "car-rental"))
PROTOCOLS = ("clemtodd", "strict")


def _run(system: str, protocol: str, domain: str | None, seed: int, out: Path) -> Summary:
    config: dict[str, Any] = {"system": system, "user": "agenda", "protocol": protocol}
    config["seed"] = seed
    if domain is not None:
        config["domain"] = domain
    return api.run("booking", config, out=out, quiet=True, review=False).summary


def _estimate(summary: Summary, metric: str) -> dict[str, Any] | None:
    found = summary.metrics.get(metric)
    if found is None:
        return None
    e = found.micro
    return {"value": e.value, "low": e.ci_low, "high": e.ci_high, "n": e.n}


def _fmt(e: dict[str, Any] | None) -> str:
    if e is None or e["value"] is None:
        return "n/a (n=0)"
    return f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def _searched(budget: int, seed: int) -> dict[str, dict[str, Any]]:
    from todeval.validation.command import load_suite, validate

    suite = load_suite("booking")
    with tempfile.TemporaryDirectory(prefix="bench-booking-search-") as tmp:
        report = validate(
            suite,
            (),
            seed=seed,
            workdir=Path(tmp),
            families=list(suite.adversaries),
            budget=budget,
            progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
        )
    found = {}
    for family in report.adversaries:
        if family.best is not None:
            found[f"best of {family.name}"] = dict(family.best.params)
    return found


def _sampled(n: int, seed: int, where: Path) -> dict[str, Any]:
    """N points of the family drawn at random, each played on MultiWOZ's test goals and the
    pack under both protocols: Inform summed over the points per place (the family's mean)."""
    import random

    from todeval.benchmarks.booking.adversaries import SPACE

    rng = random.Random(f"bench-booking-sample|{seed}")
    wins = {f"{place}/{protocol}": [0, 0] for place, _ in PLACES for protocol in PROTOCOLS}
    points = []
    for i in range(n):
        params = {name: rng.choice(choices) for name, choices in SPACE.items()}
        played: dict[str, Any] = {"params": params}
        for place, domain in PLACES:
            for protocol in PROTOCOLS:
                out = where / re.sub(r"\W+", "-", f"sample{i}-{place}-{protocol}")
                system = with_params("adversary", params)
                e = _estimate(_run(system, protocol, domain, seed, out), "booking.inform")
                assert e is not None
                won = round(e["value"] * e["n"])
                wins[f"{place}/{protocol}"][0] += won
                wins[f"{place}/{protocol}"][1] += e["n"]
                played[f"{place}/{protocol}"] = [won, e["n"]]
        points.append(played)
        print(f"sampled {i + 1}/{n}", file=sys.stderr, flush=True)
    return {"points": points, "wins": wins}


def _clinic(where: Path) -> Path:
    from todeval.benchmarks.booking.domains.tasks import generate_tasks

    text = (ROOT / "docs/own-domain.md").read_text()
    script = re.search(r"^```python file=make_clinic\.py\n(.*?)^```", text, re.S | re.M)
    assert script is not None
    (where / "make_clinic.py").write_text(script.group(1))
    subprocess.run([sys.executable, "make_clinic.py"], cwd=where, check=True)
    folder = where / "clinic"
    (folder / "tasks.json").write_text(json.dumps(generate_tasks(folder, 20, seed=0)))
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--search", type=int, metavar="EPISODES", help="search every family too")
    parser.add_argument("--sample", type=int, metavar="N", help="N random points on both places")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", help="write the figures as JSON here")
    args = parser.parse_args()
    agents = dict(AGENTS)
    if args.search:
        agents.update(_searched(args.search, args.seed))
    results: dict[str, Any] = {"agents": {}, "attributes": {}}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-booking-adv-") as tmp:
        for label, params in agents.items():
            system = with_params("adversary", params)
            measured: dict[str, Any] = {"params": params}
            for place, domain in PLACES:
                for protocol in PROTOCOLS:
                    out = Path(tmp) / re.sub(r"\W+", "-", f"{label}-{place}-{protocol}")
                    summary = _run(system, protocol, domain, args.seed, out)
                    measured[f"{place}/{protocol}"] = {
                        m: _estimate(summary, f"booking.{m}")
                        for m in ("booking_accuracy", "inform")
                    }
            results["agents"][label] = measured
            for protocol in PROTOCOLS:
                multiwoz = measured[f"MultiWOZ test/{protocol}"]
                pack = measured[f"car-rental/{protocol}"]
                ratio = (
                    pack["inform"]["value"] / multiwoz["inform"]["value"]
                    if multiwoz["inform"]["value"]
                    else None
                )
                rows.append(
                    f"| {label} | {protocol} | {_fmt(multiwoz['booking_accuracy'])} | "
                    f"{_fmt(multiwoz['inform'])} | {_fmt(pack['booking_accuracy'])} | "
                    f"{_fmt(pack['inform'])} | {'-' if ratio is None else f'{ratio:.2f}'} |"
                )
            print(f"measured {label}", file=sys.stderr, flush=True)
        clinic = _clinic(Path(tmp))
        packs: list[tuple[str, str | None]] = [
            ("MultiWOZ test", None),
            *(
                (p.parent.name, p.parent.name)
                for p in sorted((ROOT / "src/todeval/data/domains").glob("*/domain.yaml"))
            ),
            ("docs' clinic", str(clinic)),
        ]
        attribute_rows = []
        for name, domain in packs:
            for protocol in PROTOCOLS:
                out = Path(tmp) / re.sub(r"\W+", "-", f"rule-{name}-{protocol}")
                summary = _run("rule", protocol, domain, args.seed, out)
                e = _estimate(summary, "booking.attributes")
                results["attributes"][f"{name}/{protocol}"] = e
                n = 0 if e is None else e["n"]
                attribute_rows.append(
                    f"| {name} | {protocol} | {_fmt(e)} | {n} | {summary.n_episodes} |"
                )
    print(
        "| agent | protocol | MultiWOZ booking acc. | MultiWOZ Inform | car-rental booking acc. "
        "| car-rental Inform | Inform ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print(
        "| rule system on | protocol | attributes [95% CI] | n (goals requesting one) | episodes |"
    )
    print("|---|---|---|---|---|")
    print("\n".join(attribute_rows))
    if args.sample:
        with tempfile.TemporaryDirectory(prefix="bench-booking-sample-") as tmp:
            sampled = _sampled(args.sample, args.seed, Path(tmp))
        results["sample"] = sampled
        print()
        print(f"| {args.sample} random points of the family | protocol | MultiWOZ Inform (goals "
              "met / episodes) | car-rental Inform | ratio |")  # fmt: skip
        print("|---|---|---|---|---|")
        for protocol in PROTOCOLS:
            test = sampled["wins"][f"MultiWOZ test/{protocol}"]
            pack = sampled["wins"][f"car-rental/{protocol}"]
            mean_test, mean_pack = test[0] / test[1], pack[0] / pack[1]
            ratio = f"{mean_pack / mean_test:.2f}" if mean_test else "-"
            print(
                f"| mean | {protocol} | {mean_test:.4f} ({test[0]}/{test[1]}) | "
                f"{mean_pack:.4f} ({pack[0]}/{pack[1]}) | {ratio} |"
            )
    if args.output:
        Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
