"""What ``--system http`` measures: the run's call latency against the server's own answer time.

Starts ``examples/http_system_server.py`` in its own process, wrapped so that it times every
answer (request read to response written) and counts the TCP connections it accepts, then runs
``todeval run booking --system http`` (agenda user, the first ``--limit`` test tasks) against it
in a fresh process. Prints the run's wall time, the p50 call latency recorded in
``summary.json`` (role ``system``), the server's own p50 answer time, their ratio (1.0: the
recorded latency is the system's; above it: our own set-up is inside the timed section) and the
connections per episode. No timed assertion.

Run: python bench/bench_http_system.py [--limit 117] [--max-concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "http_system_server.py"

# The example server, timing each answer and counting accepted connections (GET /_stats).
SERVER = r"""
import json, runpy, sys, threading, time
example = runpy.run_path(sys.argv[1])
Handler, SystemServer = example["Handler"], example["SystemServer"]
durations, lock, accepted = [], threading.Lock(), [0]

class Timed(Handler):
    def do_POST(self):
        started = time.perf_counter()
        super().do_POST()
        with lock:
            durations.append(time.perf_counter() - started)

    def do_GET(self):
        with lock:
            data = json.dumps({"durations": durations, "connections": accepted[0]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

class Counting(SystemServer):
    def __init__(self, address):
        super().__init__(address)
        self.RequestHandlerClass = Timed

    def get_request(self):
        pair = super().get_request()
        with lock:
            accepted[0] += 1
        return pair

server = Counting(("127.0.0.1", 0))
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=117)
    parser.add_argument("--max-concurrency", type=int, default=8)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(EXAMPLE)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/"
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run"
            cmd = [
                sys.executable, "-m", "todeval.cli", "run", "booking", "--system", "http",
                "--system-url", url, "--limit", str(args.limit), "--limit-mode", "first",
                "--max-concurrency", str(args.max_concurrency), "--out", str(out), "--quiet",
            ]  # fmt: skip
            started = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - started
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return proc.returncode
            summary = json.loads((out / "summary.json").read_text())
        with urllib.request.urlopen(f"{url}_stats", timeout=10) as response:
            stats = json.loads(response.read())
    finally:
        server.terminate()
        server.wait(timeout=10)
    n = summary["n_episodes"]
    recorded = summary["latency"]["system"]["p50"]
    answered = statistics.median(stats["durations"])
    calls = len(stats["durations"])
    connections = stats["connections"] - 1  # the /_stats request's own connection
    print(f"http system run: {n} episodes, {calls} calls in {wall:.2f} s wall")
    print(
        f"p50 call latency recorded {1000 * recorded:.2f} ms, server's own p50 answer time "
        f"{1000 * answered:.2f} ms: ratio {recorded / answered:.1f} "
        f"(client side, HTTP and event loop: {1000 * (recorded - answered):.2f} ms)"
    )
    print(
        f"TCP connections accepted: {connections} ({connections / n:.2f} per episode, "
        f"{calls / max(1, connections):.1f} calls per connection)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
