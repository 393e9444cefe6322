"""ClarQ: the harder adversaries and the replayed GPT-4o seeker, under ``rule`` and
``rule-words``, side by side (docs/validation.md, "Harder adversaries").

The adversaries (``todeval.benchmarks.clarq.controls.ADVERSARY_SEEKERS``) ask specific questions
about the background without reasoning about what is missing; the replayed seeker is GPT-4o's
recorded turns from the shipped reference transcript (English). For each, S over all 260 test
tasks of a language with its 95% CI, under the provider with the meaning matcher (``rule``) and
on words alone (``rule-words``), and the ratio of the two.

Run: python bench/bench_clarq_adversaries.py [--lang en,zh] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from todeval.benchmarks.clarq.controls import ADVERSARY_SEEKERS
from todeval.cli import main

REFERENCE = (
    Path(__file__).resolve().parents[1]
    / "tests/clarq/fixtures/l2l_GPT-4o_seeker_vs_GPT-4o_provider.Comp.En.json.gz"
)


def success(args: list[str], out: Path) -> tuple[float, float, float]:
    code = main(["run", "clarq", *args, "--out", str(out), "--quiet"])
    if code != 0:
        raise SystemExit(f"todeval run clarq {' '.join(args)} exited {code}")
    micro = json.loads((out / "summary.json").read_text())["metrics"]["clarq.success"]["micro"]
    return micro["value"], micro["ci_low"], micro["ci_high"]


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en,zh")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    limit = ["--limit", str(args.limit)] if args.limit else []
    rows: list[tuple[str, str, list[str]]] = []
    for lang in args.lang.split(","):
        for name, seeker in ADVERSARY_SEEKERS.items():
            rows.append((name, lang, ["--lang", lang, "--seeker", seeker, *limit]))
        if lang == "en":
            replay = ["--seeker", "replay", "--seeker-replay", str(REFERENCE)]
            rows.append(("gpt-4o replayed", lang, ["--lang", "en", *replay, *limit]))
    print(f"{'seeker':<16} {'lang':<4} {'rule':<24} {'rule-words':<24} ratio")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, lang, run) in enumerate(rows):
            got = [
                success([*run, "--provider", provider], Path(tmp) / f"{i}-{provider}")
                for provider in ("rule", "rule-words")
            ]
            cells = [f"{v:.3f} [{lo:.3f}, {hi:.3f}]" for v, lo, hi in got]
            ratio = got[0][0] / got[1][0] if got[1][0] else float("nan")
            print(f"{name:<16} {lang:<4} {cells[0]:<24} {cells[1]:<24} {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main_()
