"""Runner throughput against a latency-simulating OpenAI-compatible server (127.0.0.1).

117 booking episodes (``monolithic`` system on a scripted model served over HTTP with a fixed
latency per call, agenda user), run three ways and printed as ratios measured in one run:

* sequential -- concurrency 1, how the reference frameworks run episodes;
* concurrent -- concurrency 32;
* ideal -- the larger of the longest episode's summed call latency and the sum over all
  episodes divided by the concurrency.

Targets (issue 4): speed-up over sequential >= 20x; efficiency (ideal / actual) >= 0.8.
Run: python bench/bench_runner_throughput.py [--latency-ms 100] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from todeval.benchmarks.booking.run import SPEC, BookingConfig, RuntimeOptions
from todeval.runner.execute import execute_plan
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess


def run(
    base_url: str, tmp: Path, name: str, concurrency: int
) -> tuple[float, list[float], list[int]]:
    models = tmp / "models.toml"
    models.write_text(
        f'[models.fake]\nspec = "openai:booking-fake@{base_url}"\nconnection_limit = 256\n'
    )
    config = BookingConfig(system="monolithic", system_model="fake", models_file=str(models))
    plan = SPEC.plan(config, RuntimeOptions(cache=False))
    t0 = time.perf_counter()
    execute_plan(plan, tmp / name, max_concurrency=concurrency, quiet=True)
    wall = time.perf_counter() - t0
    measured, calls = [], []
    for line in (tmp / name / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        measured.append(sum(u["latency_s"] for u in record["usage"].values()))
        calls.append(sum(u["calls"] for u in record["usage"].values()))
    return wall, measured, calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-sequential", action="store_true")
    args = parser.parse_args()
    server_config = ServerConfig(
        script=booking_script(), faults=FaultConfig(latency_ms=args.latency_ms)
    )
    with ServerProcess(server_config) as server, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        conc_wall, measured, calls = run(server.base_url, tmp, "concurrent", args.concurrency)
        # The ideal uses the server's nominal latency per call: time the harness adds (queueing
        # on the event loop, HTTP handling on either side) counts against us.
        per_episode = [n * args.latency_ms / 1000 for n in calls]
        ideal = max(max(per_episode), sum(per_episode) / args.concurrency)
        mean_ms = 1000 * sum(measured) / max(sum(calls), 1)
        print(
            f"episodes: {len(calls)}, model calls: {sum(calls)}, server latency "
            f"{args.latency_ms:.0f} ms, measured mean call latency {mean_ms:.0f} ms"
        )
        print(
            f"concurrency {args.concurrency}: {conc_wall:.2f} s wall; ideal {ideal:.2f} s; "
            f"efficiency (ideal/actual) {ideal / conc_wall:.2f} (target >= 0.8)"
        )
        if not args.skip_sequential:
            seq_wall, _, _ = run(server.base_url, tmp, "sequential", 1)
            print(
                f"sequential (concurrency 1): {seq_wall:.2f} s wall; "
                f"speed-up {seq_wall / conc_wall:.1f}x (target >= 20x)"
            )


if __name__ == "__main__":
    main()
