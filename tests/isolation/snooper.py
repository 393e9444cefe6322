"""A ClarQ seeker that reports, as its first question, what of the evaluator it can reach: the
package's data, the run directory, the response cache's folder (the installation's secrets),
a canary variable of the evaluator's environment. Played under ``--isolate`` it must find
none of them (tests/isolation/test_isolate.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import todeval
from todeval.benchmarks.clarq.protocol import SeekerView


def probe(run_dir: str, cache_dir: str) -> dict[str, object]:
    data = Path(todeval.__file__).resolve().parent / "data"
    return {
        "data": sorted(p.name for p in data.iterdir()) if data.is_dir() else None,
        "run_dir": sorted(p.name for p in Path(run_dir).iterdir())
        if Path(run_dir).is_dir()
        else None,
        "cache": sorted(p.name for p in Path(cache_dir).iterdir())
        if Path(cache_dir).is_dir()
        else None,
        "canary": os.environ.get("TODEVAL_CANARY"),
        "passed": os.environ.get("TODEVAL_PASSED"),
        "home": sorted(os.listdir(os.path.expanduser("~"))),
    }


class Snooper:
    async def start(self, context: SeekerView) -> None:
        self.said = False

    async def respond(self, provider_message: str) -> str:
        if self.said:
            return "Thank you, goodbye."
        self.said = True
        found = probe(
            os.environ.get("SNOOP_RUN_DIR", "/nonexistent"),
            os.environ.get("SNOOP_CACHE", "/nonexistent"),
        )
        return "SNOOP " + json.dumps(found, sort_keys=True)
