"""ClarQ self-play speed and the scripted seekers' scores on every test task.

1. Offline, all 520 test tasks (260 English, 260 Chinese), provider ``rule``: the ``oracle``,
   ``wrong`` and ``quitter`` seekers, each run printed with S, AQD and AQL (and every task the
   oracle missed), episodes per second (wall, the corpus summary included), the harness CPU per
   provider decision -- the process's CPU time over the episodes divided by the provider turns,
   with the ``rule`` provider and with a constant-time stand-in provider (what the seeker, the
   game master, the per-episode scoring and the runner cost on their own) -- and the CPU of the
   corpus summary (the scorer's bootstraps) per 260 episodes.
2. Against the latency-simulating OpenAI-compatible test server (127.0.0.1): LLM seeker,
   ``llm`` provider and LLM judge on one scripted model served over HTTP with a fixed latency
   per call, run at concurrency 32 and sequentially (concurrency 1); the speed-up is printed
   with the ideal (the larger of the longest episode's calls and all calls / concurrency).

Target (issue 12): speed-up over sequential >= 20x at concurrency 32.
Run: python bench/bench_clarq_selfplay.py [--latency-ms 100] [--limit 64] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from todeval.benchmarks.clarq.protocol import Decision, ProviderTurn, ProviderView
from todeval.benchmarks.clarq.run import SPEC, ClarqConfig
from todeval.core.records import EpisodeRecord, Summary
from todeval.runner.execute import execute_plan
from todeval.runner.options import RuntimeOptions
from todeval.testing.clarq_model import clarq_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

SEEKERS = ("oracle", "wrong", "quitter")


class ConstantProvider:
    """Passes the gate, then releases the first available node: no text processing at all."""

    async def respond(self, view: ProviderView) -> ProviderTurn:
        if not view.gate_open:
            return ProviderTurn(decision=Decision.GATE_PASS, message=view.task.opening)
        if not view.available:
            return ProviderTurn(decision=Decision.ENOUGH, message="You have enough.")
        node = view.available[0]
        return ProviderTurn(decision=Decision.RELEASE, message=node.text, released=[node.label])


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def offline(tmp: Path, seeker: str, provider: str, concurrency: int) -> dict[str, Any]:
    """Both languages' test sets, one run each; figures over the 520 episodes."""
    episodes: list[dict[str, Any]] = []
    wall = cpu = summary_cpu = 0.0
    for lang in ("en", "zh"):
        config = ClarqConfig(lang=lang, seeker=seeker, provider=provider)
        plan = SPEC.plan(config, RuntimeOptions(cache=False))
        finalize = plan.finalize
        assert finalize is not None

        def timed(records: Iterable[EpisodeRecord], finalize: Any = finalize) -> Summary:
            nonlocal summary_cpu
            c = time.process_time()
            try:
                return finalize(records)  # type: ignore[no-any-return]
            finally:
                summary_cpu += time.process_time() - c

        plan.finalize = timed
        out = tmp / f"{lang}-{seeker}-{provider.rsplit(':', 1)[-1]}"
        t0, c0 = time.perf_counter(), time.process_time()
        execute_plan(plan, out, max_concurrency=concurrency, quiet=True)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        episodes += _records(out)
    decisions = sum(e["kind"] == "provider_decision" for r in episodes for e in r["events"])
    n = len(episodes)

    def mean(name: str) -> float:
        return sum(r["metrics"].get(name, 0.0) for r in episodes) / n

    misses = [r["task_id"] for r in episodes if r["outcome"] != "success"]
    return {
        "n": n,
        "S": mean("clarq.success"),
        "AQD": mean("clarq.aqd"),
        "AQL": mean("clarq.aql"),
        "released": mean("clarq.released"),
        "eps": n / wall,
        "cpu_us": 1e6 * (cpu - summary_cpu) / decisions if decisions else None,
        "summary_ms": 1e3 * summary_cpu / 2,
        "decisions": decisions,
        "misses": misses,
    }


def served(base_url: str, tmp: Path, name: str, limit: int, concurrency: int) -> float:
    models = tmp / "models.toml"
    models.write_text(
        f'[models.fake]\nspec = "openai:scripted@{base_url}"\nconnection_limit = 256\n'
    )
    config = ClarqConfig(
        seeker="llm",
        seeker_model="fake",
        provider="llm",
        provider_model="fake",
        judge_model="fake",
        models_file=str(models),
        limit=limit,
    )
    plan = SPEC.plan(config, RuntimeOptions(cache=False))
    t0 = time.perf_counter()
    execute_plan(plan, tmp / name, max_concurrency=concurrency, quiet=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--limit", type=int, default=64, help="tasks of the served runs")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-sequential", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print("offline, 520 test tasks (en + zh), provider rule, concurrency 8:")
        for seeker in SEEKERS:
            r = offline(tmp, seeker, "rule", 8)
            per = f"{r['cpu_us']:5.0f} us" if r["cpu_us"] is not None else "    -   "
            print(
                f"  {seeker:8s} S {r['S']:.4f}  AQD {r['AQD']:+.3f}  AQL {r['AQL']:6.2f}  "
                f"released {r['released']:.3f}  {r['eps']:5.0f} episodes/s  {per} CPU per "
                f"provider decision ({r['decisions']} decisions); corpus summary "
                f"{r['summary_ms']:.0f} ms CPU per 260 episodes"
            )
            if seeker == "oracle" and r["misses"]:
                print(f"    oracle misses: {', '.join(r['misses'])}")
        bare = offline(tmp, "oracle", f"{__name__}:ConstantProvider", 8)
        print(
            f"  harness alone (oracle vs a constant-time provider): {bare['eps']:.0f} episodes/s, "
            f"{bare['cpu_us']:.0f} us CPU per provider decision (seeker and game master included, "
            "corpus summary not)"
        )

        server_config = ServerConfig(
            script=clarq_script(questions=2), faults=FaultConfig(latency_ms=args.latency_ms)
        )
        with ServerProcess(server_config) as server:
            conc = served(server.base_url, tmp, "concurrent", args.limit, args.concurrency)
            calls = [
                sum(u["calls"] for u in r["usage"].values()) for r in _records(tmp / "concurrent")
            ]
            per_episode = [n * args.latency_ms / 1000 for n in calls]
            ideal = max(max(per_episode), sum(per_episode) / args.concurrency)
            print(
                f"\nserved: {len(calls)} episodes, {sum(calls)} model calls (seeker, provider, "
                f"judge), server latency {args.latency_ms:.0f} ms per call"
            )
            print(
                f"concurrency {args.concurrency}: {conc:.2f} s wall; ideal {ideal:.2f} s; "
                f"efficiency (ideal/actual) {ideal / conc:.2f}"
            )
            if not args.skip_sequential:
                seq = served(server.base_url, tmp, "sequential", args.limit, 1)
                print(
                    f"sequential (concurrency 1): {seq:.2f} s wall; speed-up {seq / conc:.1f}x "
                    "(target >= 20x)"
                )


if __name__ == "__main__":
    main()
