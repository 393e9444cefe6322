"""ClarQ: the seekers that ask without reasoning about what is missing, and the headline SPQ.

Issue 41's table: for every seeker below, on all 260 test tasks of each language under the
``strict`` protocol, the paper's S and the headline SPQ (S weighted by question economy) with
their 95% CIs (bootstrap over task types), against the ``rule`` provider (and, with
``--providers rule,rule-words``, on words alone). The seekers are the sweep family's
(``todeval.benchmarks.clarq.adversaries:SweepSeeker``) at the issue's points, the older
harder adversaries (``controls.ADVERSARY_SEEKERS``), GPT-4o's recorded seeker turns replayed
(English), the bag family at the red team's points (round 2) and the privileged oracle. With
``--search EPISODES`` the sweep and bag families are then
searched as ``todeval validate clarq`` does, with that budget per family, and the best agent
found is printed (docs/validation.md, "How we attack our benchmarks").

Run: python bench/bench_clarq_adversaries.py [--lang en,zh] [--providers rule] [--limit N]
     [--search EPISODES] [--seed 0] [--no-table]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from todeval import api
from todeval.benchmarks.clarq.adversaries import BAG_SEEKER, SWEEP_SEEKER
from todeval.benchmarks.clarq.controls import ADVERSARY_SEEKERS, HEADLINE, SUITE
from todeval.core.records import Estimate

REFERENCE = (
    Path(__file__).resolve().parents[1]
    / "tests/clarq/fixtures/l2l_GPT-4o_seeker_vs_GPT-4o_provider.Comp.En.json.gz"
)

SWEEPS: dict[str, dict[str, Any]] = {
    "shotgun: 'Which X ...? Where is the X? How do I use the X?' for every entry and word, "
    "one turn": {"template": "wh3", "source": "all", "per_turn": 99},
    "the same over the provider's words": {
        "template": "wh3",
        "source": "provider",
        "per_turn": 99,
    },
    "'Should I use the A with the B?' every pair, one turn": {
        "template": "yesno-a-b",
        "source": "background",
        "per_turn": 99,
    },
    "'How do the A and the B matter ...?' pairs, one a turn": {
        "template": "how-a-b",
        "source": "background",
        "per_turn": 1,
    },
    "one wh-question a turn about each entry in turn": {
        "template": "wh3",
        "source": "background",
        "per_turn": 1,
    },
    "'Which X should I use?' one a turn": {
        "template": "which",
        "source": "background",
        "per_turn": 1,
    },
    "the three wh-templates, one entry each, two a turn": {
        "template": "wh-rot",
        "source": "background",
        "per_turn": 2,
    },
    "the same, three a turn, six turns": {
        "template": "wh-rot",
        "source": "background",
        "per_turn": 3,
        "turns": 6,
    },
}


BAGS: dict[str, dict[str, Any]] = {
    "bag (red team A1): 70% of the words heard and told, every wh-word, goodbye at a miss": {},
    "the same, goodbye after three misses in a row": {"misses": 3},
    "parrot (red team B): 'Which <half the words the provider said>?'": {
        "keep": 0.5,
        "source": "provider",
        "template": "bare",
    },
    "small bag: 'Which <10% of the words> should I use?'": {"keep": 0.1, "template": "which"},
}
"""The bag family's points for the red team's attacks (issue 41, round 2)."""


def _cell(e: Estimate | None) -> str:
    if e is None or e.value is None:
        return "-"
    if e.ci_low is None or e.ci_high is None:
        return f"{e.value:.3f}"
    return f"{e.value:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]"


def measure(config: dict[str, Any], out: Path) -> tuple[Estimate | None, Estimate | None]:
    result = api.run("clarq", {"protocol": "strict", **config}, out=out, review=False)
    metrics = result.summary.metrics
    s, spq = metrics.get("clarq.success"), metrics.get(HEADLINE)
    return (s.micro if s else None), (spq.micro if spq else None)


def rows(langs: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    out: list[tuple[str, str, dict[str, Any]]] = []
    for lang in langs:
        for name, params in SWEEPS.items():
            out.append((name, lang, {"seeker": SWEEP_SEEKER, "seeker_params": params}))
        for name, params in BAGS.items():
            out.append((name, lang, {"seeker": BAG_SEEKER, "seeker_params": params}))
        for name, seeker in ADVERSARY_SEEKERS.items():
            out.append((f"{name} (controls.ADVERSARY_SEEKERS)", lang, {"seeker": seeker}))
        if lang == "en":
            replay = {"seeker": "replay", "seeker_replay": str(REFERENCE)}
            out.append(("GPT-4o's recorded seeker turns, replayed", lang, replay))
        out.append(("oracle (privileged)", lang, {"seeker": "oracle"}))
    return out


def search(budget: int, seed: int, limit: int | None, langs: list[str]) -> None:
    from todeval.validation.command import validate
    from todeval.validation.search import describe

    # every task of the language per point (CI plays a sample: the family's ``tasks``)
    families = [
        f.model_copy(update={"tasks": limit}) for f in SUITE.adversaries if f.group in langs
    ]
    with tempfile.TemporaryDirectory(prefix="todeval-clarq-search-") as tmp:
        report = validate(
            SUITE,
            (),
            seed=seed,
            limit=limit,
            workdir=Path(tmp),
            families=families,
            budget=budget,
            progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
        )
    print("\n| family | points (episodes) | best agent found | SPQ [95% CI] | band |")
    print("|---|---|---|---|---|")
    for a in report.adversaries:
        best = a.best
        found = describe(best.params) if best else f"error: {a.error}"
        value = (
            f"{best.value:.3f} [{best.ci_low:.3f}, {best.ci_high:.3f}]"
            if best
            and best.value is not None
            and best.ci_low is not None
            and best.ci_high is not None
            else "-"
        )
        band = f"[{a.low:g}, {a.high:g}]"
        print(f"| {a.name} | {len(a.trials)} ({a.episodes}) | {found} | {value} | {band} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lang", default="en,zh")
    parser.add_argument("--providers", default="rule")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--search", type=int, default=None, metavar="EPISODES")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-table", action="store_true", help="only the search")
    args = parser.parse_args()
    langs = args.lang.split(",")
    providers = args.providers.split(",")
    head = " | ".join(f"S {p} | SPQ {p}" for p in providers)
    if not args.no_table:
        print(f"| seeker | lang | {head} |")
        print("|---|---|" + "---|---|" * len(providers))
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, lang, config) in enumerate([] if args.no_table else rows(langs)):
            cells = []
            for provider in providers:
                run = {**config, "lang": lang, "provider": provider, "seed": args.seed}
                if args.limit:
                    run["limit"] = args.limit
                s, spq = measure(run, Path(tmp) / f"{i}-{provider}")
                cells += [_cell(s), _cell(spq)]
            print(f"| {name} | {lang} | {' | '.join(cells)} |", flush=True)
    if args.search:
        search(args.search, args.seed, args.limit, langs)


if __name__ == "__main__":
    main()
