"""A 117-episode run through a fault-injecting OpenAI-compatible server on 127.0.0.1.

The system is ``monolithic`` backed by a scripted model served over HTTP; the user is the agenda
simulator. With faults of every kind at 10% each, no episode may be lost or duplicated and the
summary must equal the fault-free run's (apart from timings).
"""

from __future__ import annotations

import json
from pathlib import Path

from todeval.backends import RetryPolicy
from todeval.benchmarks.booking.run import SPEC, BookingConfig, RuntimeOptions
from todeval.runner.execute import execute_plan
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

FAULTS = FaultConfig(
    seed=1,
    error_500=0.1,
    error_429=0.1,
    retry_after_s=0.01,
    hang=0.1,
    hang_s=1.0,
    reset=0.1,
    malformed=0.1,
    truncated=0.1,
)


def _models_file(tmp: Path, base_url: str) -> Path:
    path = tmp / "models.toml"
    path.write_text(
        "[models.fake]\n"
        f'spec = "openai:booking-fake@{base_url}"\n'
        "parameters = 1000000000\n"
        "price_in_per_1m = 1.0\nprice_out_per_1m = 2.0\n"
        "connection_limit = 64\ntimeout_s = 0.2\n"
    )
    return path


def _run(tmp: Path, name: str, faults: FaultConfig) -> dict:
    with ServerProcess(ServerConfig(script=booking_script(), faults=faults)) as server:
        models = _models_file(tmp, server.base_url)
        config = BookingConfig(system="monolithic", system_model="fake", models_file=str(models))
        runtime = RuntimeOptions(
            cache=False, retry=RetryPolicy(max_attempts=30, base_delay_s=0.005, max_delay_s=0.05)
        )
        plan = SPEC.plan(config, runtime)
        out = tmp / name
        execute_plan(plan, out, max_concurrency=32, quiet=True)
        stats = server.stats()
    lines = (out / "episodes.jsonl").read_text().splitlines()
    ids = [json.loads(line)["episode_id"] for line in lines]
    assert len(ids) == len(set(ids)) == 117, "episodes lost or duplicated"
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("timing")
    summary.pop("latency")
    for usage in summary["usage"].values():
        usage.pop("latency_s")
    return {"summary": summary, "stats": stats}


def test_faults_lose_nothing_and_change_nothing(tmp_path: Path) -> None:
    clean = _run(tmp_path, "clean", FaultConfig())
    faulty = _run(tmp_path, "faulty", FAULTS)
    assert clean["summary"]["outcomes"]["infrastructure_error"] == 0
    assert faulty["summary"]["outcomes"]["infrastructure_error"] == 0
    assert faulty["summary"] == clean["summary"]
    assert clean["summary"]["usage"]["system"]["calls"] > 117
    faults = faulty["stats"]["faults"]
    for kind in ("500", "429", "hang", "reset", "malformed", "truncated"):
        assert faults.get(kind, 0) > 0, f"no {kind} fault was injected: {faults}"
