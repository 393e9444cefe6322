"""Simulations per hour on a local multi-node Ray cluster, 1, 2 and 4 worker nodes (issue 43).

Workload (as the concurrency bench): booking, the ``monolithic`` LLM system on the test model
server (a process on 127.0.0.1 answering every call after ``--latency-ms``, 1000 by default),
agenda user, the 117 test tasks x ``--trials``, no cache, no review. For each number of worker
nodes N the bench starts a cluster -- a head without CPUs plus N ``ray start`` worker nodes of
``--cpus-per-node`` CPUs, each in its own temp directory with its own ports
(:mod:`todeval.testing.ray_cluster`) -- and runs, as a child process,

    todeval run booking --system monolithic --system-model m --models-file M --trials T
        --max-concurrency (N x --per-node-concurrency) --no-cache --no-review --quiet
        --executor ray --ray-address HEAD --out DIR

then stops the cluster. Per configuration it prints the whole-process wall time, simulations
per hour, the floor and achieved / floor, and the driver's peak memory (its ``VmHWM``, read
until it exits) and CPU time. The floor is the ideal wall time at that concurrency: the larger
of the longest episode's sequential calls and all episodes' calls divided by the concurrency,
each call taking the server's nominal latency (whatever the harness adds counts against us).
The wall time runs from launching the driver to its exit, so the driver's and the Ray
workers' start-up and the summary at the end count; starting the cluster itself (``ray
start`` of the head and the nodes, before the driver is launched) does not, as a run on an
existing cluster does not pay it.

Where the gap to the floor goes, from the records' own start and end times: start-up (driver
launched to the first episode's start), finish (the last episode's end to the driver's exit),
and within the episodes' window the share of slots busy (idle slots: ramp-up, the tail, waits
between episodes), how much longer episodes took than their calls' nominal time (HTTP and
the harness inside an episode), and the tail (the last stretch with fewer than 95% of the
slots busy: at most about one episode for a run whose episodes are all alike).

Target (issue 43): achieved / floor >= 0.85 at 4 nodes, whole process.
Run: python bench/bench_ray_scaling.py [--nodes 1 2 4] [--trials 18]
     [--per-node-concurrency 32] [--latency-ms 1000] [--figure docs/images/ray-scaling.svg]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.ray_cluster import LocalRayCluster
from todeval.testing.server_process import ServerProcess


@dataclass
class Point:
    nodes: int
    concurrency: int
    episodes: int
    unique: int
    calls: int
    wall_s: float
    floor_s: float
    window_s: float  # first episode's start to last episode's end
    startup_s: float  # driver launched to first episode started
    finish_s: float  # last episode ended to driver exited
    driver_peak_mb: float
    mean_call_ms: float  # as the client measured it (the server's latency plus HTTP both ways)
    driver_cpu_s: float  # the driver's own CPU time (user + system), from wait4
    slots_used: float  # within the window: episode-seconds played / (concurrency x window)
    stretch: float  # episode-seconds played / the calls' nominal seconds (1.0: no overhead)
    tail_s: float  # from the last moment 95% of the slots were busy to the last episode's end
    load_before: float
    load_after: float

    @property
    def per_hour(self) -> float:
        return self.unique / self.wall_s * 3600

    @property
    def floor_per_hour(self) -> float:
        return self.unique / self.floor_s * 3600

    @property
    def ratio(self) -> float:
        return self.floor_s / self.wall_s


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _peak_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (``VmHWM``, reset at exec: unlike a child's
    ``ru_maxrss``, it never counts the memory of the process that forked it)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def _driver(
    command: list[str], env: dict[str, str], log: Path
) -> tuple[int, float, float, float, float]:
    """Run the driver; its exit code, wall seconds, peak resident memory (MB, read until it
    exits), the clock time it was launched at and its CPU seconds (user + system, its own
    threads only: ``wait4`` reaps it with its resource usage)."""
    with log.open("wb") as out:
        launched = time.time()
        t0 = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        peak = 0.0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _peak_mb(process.pid) or 0.0)
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, wall, peak, launched, usage.ru_utime + usage.ru_stime


def _tail(starts: list[float], ends: list[float], concurrency: int) -> float:
    """Seconds from the last moment at least 95% of the slots were playing to the last end."""
    events = sorted([(t, 1) for t in starts] + [(t, -1) for t in ends])
    playing, last_full = 0, min(starts)
    for t, step in events:
        playing += step
        if playing >= 0.95 * concurrency:
            last_full = t
    return max(ends) - last_full


def run_one(nodes: int, args: argparse.Namespace, base_url: str, tmp: Path) -> Point:
    models = tmp / "models.toml"
    concurrency = nodes * args.per_node_concurrency
    models.write_text(
        f'[models.m]\nspec = "openai:m@{base_url}"\nconnection_limit = {max(concurrency, 8)}\n'
    )
    out = tmp / f"run-{nodes}"
    load_before = os.getloadavg()[0]
    with LocalRayCluster(workers=nodes, cpus=args.cpus_per_node) as cluster:
        command = [
            sys.executable,
            "-m",
            "todeval",
            "run",
            "booking",
            "--system",
            "monolithic",
            "--system-model",
            "m",
            "--models-file",
            str(models),
            "--trials",
            str(args.trials),
            "--max-concurrency",
            str(concurrency),
            "--no-cache",
            "--no-review",
            "--quiet",
            "--executor",
            "ray",
            "--ray-address",
            cluster.address,
            "--out",
            str(out),
        ]
        code, wall, peak, launched, cpu = _driver(
            command, cluster.env(), tmp / f"driver-{nodes}.log"
        )
    load_after = os.getloadavg()[0]
    if code != 0:
        log = (tmp / f"driver-{nodes}.log").read_text(errors="replace")
        raise SystemExit(f"the driver exited {code} at {nodes} node(s):\n{log[-3000:]}")
    # one line at a time: the bench's own memory stays small (a forked driver starts with it)
    calls, starts, ends, keys = [], [], [], set()
    measured = 0.0
    with (out / "episodes.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            calls.append(sum(u["calls"] for u in record["usage"].values()))
            measured += sum(u["latency_s"] for u in record["usage"].values())
            starts.append(_stamp(record["timing"]["started_at"]))
            ends.append(_stamp(record["timing"]["ended_at"]))
            keys.add((record["task_id"], record["trial"]))
    latency = args.latency_ms / 1000
    floor = max(max(calls) * latency, sum(calls) * latency / concurrency)
    window = max(ends) - min(starts)
    played = sum(end - start for start, end in zip(starts, ends, strict=True))
    executor = json.loads((out / "manifest.json").read_text())["sessions"][-1]["executor"]
    print(f"  {executor}", flush=True)
    return Point(
        nodes=nodes,
        concurrency=concurrency,
        episodes=len(calls),
        unique=len(keys),
        calls=sum(calls),
        wall_s=wall,
        floor_s=floor,
        window_s=window,
        startup_s=min(starts) - launched,
        finish_s=launched + wall - max(ends),
        driver_peak_mb=peak,
        mean_call_ms=1000 * measured / max(sum(calls), 1),
        driver_cpu_s=cpu,
        slots_used=played / (concurrency * window),
        stretch=played / (sum(calls) * latency),
        tail_s=_tail(starts, ends, concurrency),
        load_before=load_before,
        load_after=load_after,
    )


def figure(points: list[Point], latency_ms: float, per_node: int) -> str:
    """The scaling curve as a small standalone SVG: simulations per hour against worker
    nodes, achieved (solid) and the floor's (dashed), each point labelled with its ratio."""
    width, height = 560, 340
    left, right, top, bottom = 78, 24, 44, 56
    top_value = max(max(p.floor_per_hour for p in points), 1.0)
    step = float(10 ** (len(str(int(top_value))) - 1))
    y_max = step * (int(top_value / step) + 1)
    x_max = max(p.nodes for p in points)

    def x(n: float) -> float:
        return left + (width - left - right) * (n / x_max)

    def y(v: float) -> float:
        return height - bottom - (height - top - bottom) * (v / y_max)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        "<title>Simulations per hour on a local Ray cluster, by worker nodes</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="20" font-size="13" font-weight="bold">booking, monolithic '
        f"system, test model server at {latency_ms:.0f} ms per call</text>",
        f'<text x="{left}" y="36" fill="#555555">{per_node} episodes in flight per worker '
        "node; whole process (start-up included)</text>",
    ]
    for k in range(6):
        v = y_max * k / 5
        parts.append(
            f'<line x1="{left}" y1="{y(v):.1f}" x2="{width - right}" y2="{y(v):.1f}" '
            'stroke="#e5e5e5"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
    for p in points:
        parts.append(
            f'<text x="{x(p.nodes):.1f}" y="{height - bottom + 18}" '
            f'text-anchor="middle">{p.nodes}</text>'
        )
    parts.append(
        f'<text x="{(left + width - right) / 2:.1f}" y="{height - 14}" '
        'text-anchor="middle">worker nodes</text>'
    )
    parts.append(
        f'<text transform="translate(18 {(top + height - bottom) / 2:.1f}) rotate(-90)" '
        'text-anchor="middle">simulations per hour</text>'
    )
    parts.append(
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" '
        f'y2="{height - bottom}" stroke="#333333"/>'
    )
    floor_path = " ".join(f"{x(p.nodes):.1f},{y(p.floor_per_hour):.1f}" for p in points)
    real_path = " ".join(f"{x(p.nodes):.1f},{y(p.per_hour):.1f}" for p in points)
    parts.append(
        f'<polyline points="{floor_path}" fill="none" stroke="#999999" '
        'stroke-dasharray="5 4" stroke-width="2"/>'
    )
    parts.append(f'<polyline points="{real_path}" fill="none" stroke="#0072B2" stroke-width="2"/>')
    for p in points:
        parts.append(
            f'<circle cx="{x(p.nodes):.1f}" cy="{y(p.per_hour):.1f}" r="4.5" fill="#0072B2">'
            f"<title>{p.nodes} node(s): {p.per_hour:,.0f}/h, {p.ratio:.2f} of the floor"
            "</title></circle>"
        )
        parts.append(
            f'<text x="{x(p.nodes) - 8:.1f}" y="{y(p.per_hour) + 18:.1f}" '
            f'text-anchor="end" fill="#0072B2">{p.per_hour:,.0f} ({p.ratio:.2f})</text>'
        )
    legend_y = top + 8
    parts.append(
        f'<line x1="{left + 12}" y1="{legend_y}" x2="{left + 36}" y2="{legend_y}" '
        'stroke="#0072B2" stroke-width="2"/>'
    )
    parts.append(f'<text x="{left + 42}" y="{legend_y + 4}">measured (ratio to the floor)</text>')
    parts.append(
        f'<line x1="{left + 12}" y1="{legend_y + 18}" x2="{left + 36}" y2="{legend_y + 18}" '
        'stroke="#999999" stroke-dasharray="5 4" stroke-width="2"/>'
    )
    parts.append(
        f'<text x="{left + 42}" y="{legend_y + 22}">floor (ideal at that concurrency)</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--trials", type=int, default=18, help="episodes per task (117 tasks)")
    parser.add_argument("--per-node-concurrency", type=int, default=32)
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=1000.0)
    parser.add_argument("--figure", type=Path, default=None, help="write the curve (SVG)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures (JSON)")
    args = parser.parse_args()
    server_config = ServerConfig(
        script=booking_script(), faults=FaultConfig(latency_ms=args.latency_ms)
    )
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}; latency {args.latency_ms:.0f} ms, "
        f"{args.per_node_concurrency} in flight per node, trials {args.trials}",
        flush=True,
    )
    points: list[Point] = []
    with ServerProcess(server_config) as server, tempfile.TemporaryDirectory() as tmp_name:
        for nodes in args.nodes:
            print(f"{nodes} worker node(s)...", flush=True)
            point = run_one(nodes, args, server.base_url, Path(tmp_name))
            points.append(point)
            print(
                f"  {point.unique} episodes ({point.episodes} lines), {point.calls} calls, "
                f"concurrency {point.concurrency}: wall {point.wall_s:.1f} s (start-up "
                f"{point.startup_s:.1f} s, episodes {point.window_s:.1f} s, finish "
                f"{point.finish_s:.1f} s; mean call {point.mean_call_ms:.0f} ms; in the "
                f"episodes' window {point.slots_used:.3f} of the slots busy, episodes "
                f"{point.stretch:.3f}x their calls' nominal time, tail {point.tail_s:.1f} s), "
                f"floor {point.floor_s:.1f} s -> "
                f"{point.per_hour:,.0f} simulations/hour, {point.ratio:.2f} of the floor; "
                f"driver peak {point.driver_peak_mb:.0f} MB, CPU {point.driver_cpu_s:.1f} s; "
                f"load {point.load_before:.1f} -> "
                f"{point.load_after:.1f}",
                flush=True,
            )
            if args.json is not None:  # after each configuration: a cut-short bench keeps it
                rows = [asdict(p) | {"per_hour": p.per_hour, "ratio": p.ratio} for p in points]
                args.json.write_text(json.dumps(rows, indent=2) + "\n")
    points.sort(key=lambda p: p.nodes)
    print("\nnodes  concurrency  episodes  wall s  floor s  sims/hour  floor ratio  driver MB")
    for p in points:
        print(
            f"{p.nodes:>5}  {p.concurrency:>11}  {p.unique:>8}  {p.wall_s:>6.1f}  "
            f"{p.floor_s:>7.1f}  {p.per_hour:>9,.0f}  {p.ratio:>11.2f}  {p.driver_peak_mb:>9.0f}"
        )
    most = points[-1]
    print(f"at {most.nodes} node(s): {most.ratio:.2f} of the floor (target >= 0.85)")
    if args.figure is not None:
        args.figure.write_text(figure(points, args.latency_ms, args.per_node_concurrency))
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
