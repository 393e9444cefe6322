"""`todeval view` at a million episodes (1,000 runs x 1,000), each figure against its budget.

The runs: `--base` synthetic booking runs written by bench_report_scale.py's builder (real
episodes of `todeval run booking` re-used as templates; ~7.9 MB of episodes.jsonl per run),
then copied (real copies, not links) under new names and system names up to `--runs`. With
`--keep DIR` the set is written to DIR once and re-used by later runs of this script
(delete it when done: ~8 GB at 1,000 runs).

Then `todeval view` runs as a child process (its own memory), and this script measures:

* cold start: from launching `todeval view` (no index yet) until the first page answers,
  and until the episode index is complete (the page is served from the runs' summaries while
  the index is built; the process prints its progress on stderr) (budget 60 s);
* the index file's size against the runs' episodes.jsonl (budget 25%);
* warm start: a second `todeval view` over the same, complete index: launch until the first
  page, its facets and its first list page answered (budget 1 s after the server listens;
  the whole process's start-up, Python imports included, is printed too);
* a transcript (`/api/episode`), median and slowest of several runs (budget 0.1 s);
* searches (`/api/episodes?q=...`), each term's time for the total and the first page,
  alone and with the list's other filters (run, outcome, failure class, group, label, a page
  past the failures, by offset and, as the page's "show more" asks, after the previous page's
  last row) (budget 0.5 s);
* the server's peak memory over all that (VmHWM of the child; budget 300 MB);
* beside each time, the server's CPU time for it (user + system, from /proc; the machine is
  shared, so wall times alone say little);
* the live boards show rank intervals (counted in the page).

Prints "ratio = measured / budget" lines; asserts nothing. Run:

    python bench/bench_view_scale.py [--runs 1000] [--base 100] [--keep /tmp/view-runs]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BUDGET_COLD_S = 60.0
BUDGET_INDEX_FRACTION = 0.25
BUDGET_WARM_S = 1.0
BUDGET_TRANSCRIPT_S = 0.1
BUDGET_SEARCH_S = 0.5
BUDGET_RSS_MB = 300.0

SEARCHES = ("syn/0042", "turn cap", "wrong_booking", "restaurant", "zzzznothing")
# a search with the list's other filters (query strings added to q=TERM)
FILTERED = (
    ("restaurant", "outcome=failure"),
    ("restaurant", "outcome=success"),
    ("restaurant", "run=run-500"),
    ("hotel", "fc=wrong_booking"),
    ("train", "group=hotel%2Btrain"),
    ("restaurant", "label=failure_class%3Aturn_cap"),
    ("restaurant", "offset=300000"),
)
DEEP = ("restaurant", 300_000)  # also paged to by cursor, as the page's "show more" does


_TEMPLATE_SUFFIX = re.compile(rb'"syn/(\d{4})-[^"#]*')


def share_tasks(run: Path) -> None:
    """Name the builder's episodes ``syn/NNNN`` (it adds the template's task id), so every
    run has the same 1,000 tasks, as runs of one task set do: the boards can rank them."""
    path = run / "episodes.jsonl"
    data = path.read_bytes()
    if _TEMPLATE_SUFFIX.search(data, 0, 4096):
        path.write_bytes(_TEMPLATE_SUFFIX.sub(rb'"syn/\1', data))


def prepare(root: Path, runs: int, base: int, episodes: int, resamples: int) -> None:
    """Write ``base`` runs with bench_report_scale's builder (a child process), then copy
    them under new names up to ``runs``; an existing complete set is kept."""
    if not all((root / f"run-{i:03d}" / "summary.json").exists() for i in range(base)):
        if root.exists():
            shutil.rmtree(root)
        builder = Path(__file__).with_name("bench_report_scale.py")
        argv = [sys.executable, str(builder), "--generate", str(root)]
        argv += ["--runs", str(base), "--episodes", str(episodes), "--resamples", str(resamples)]
        t0 = time.perf_counter()
        subprocess.run(argv, check=True)
        print(f"wrote {base} runs in {time.perf_counter() - t0:.0f} s", flush=True)
    for i in range(base):
        share_tasks(root / f"run-{i:03d}")
    t0 = time.perf_counter()
    for i in range(base, runs):
        src, dst = root / f"run-{i % base:03d}", root / f"run-{i:03d}"
        if (dst / "manifest.json").exists():
            continue  # complete: the manifest is written last
        dst.mkdir(exist_ok=True)
        for name in ("episodes.jsonl", "summary.json"):
            shutil.copyfile(src / name, dst / name)
        m = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
        m["config"]["system"] = m["roles"]["system"]["player"] = f"sys-{i:03d}"
        m["players"]["system"] = f"sys-{i:03d}"
        m["config_hash"] = f"synthetic-{i:03d}"
        (dst / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")
    print(f"copied to {runs} runs in {time.perf_counter() - t0:.0f} s", flush=True)


# --- the server, as a child process -----------------------------------------------------------


class Server:
    """``todeval view ROOT --port 0 --index INDEX`` in a child process."""

    def __init__(self, root: Path, index: Path) -> None:
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "todeval",
                "view",
                str(root),
                "--port",
                "0",
                "--index",
                str(index),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        self.last_cpu_s = 0.0  # the server's CPU time for the last timed request
        self.ready_s: float | None = None  # the process said its index is complete
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._err.start()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            self.stop()
            raise SystemExit(f"todeval view did not start: {line!r} {''.join(self.stderr)}")
        self.port = int(found.group(1))
        self.listening_s = time.perf_counter() - self.t0

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            if line.startswith("index ") and "ready" in line and self.ready_s is None:
                self.ready_s = time.perf_counter() - self.t0

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        return resp.status, body

    def timed(self, path: str) -> tuple[float, bytes]:
        t0, c0 = time.perf_counter(), self.cpu_s()
        status, body = self.get(path)
        assert status == 200, (path, status, body[:200])
        self.last_cpu_s = self.cpu_s() - c0
        return time.perf_counter() - t0, body

    def cpu_s(self) -> float:
        """The server's CPU time so far (user + system, every thread), in seconds."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        found = re.search(r"VmHWM:\s+(\d+) kB", status)
        return int(found.group(1)) / 1024 if found else float("nan")

    def wait_ready(self, timeout: float = 3600.0) -> float:
        while self.ready_s is None and time.perf_counter() - self.t0 < timeout:
            if self.proc.poll() is not None:
                raise SystemExit("todeval view exited: " + "".join(self.stderr[-5:]))
            time.sleep(0.1)
        assert self.ready_s is not None
        return self.ready_s

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self._err.join(timeout=5)


def _ratio(label: str, measured: float, budget: float, unit: str) -> None:
    print(
        f"  {label:<62} {measured:9.3f} {unit:<3} budget {budget:7.2f} {unit:<3} "
        f"ratio = {measured / budget:.3f}",
        flush=True,
    )


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def measure(root: Path, index: Path, opens: int, warm_only: bool = False) -> None:
    data = sum(p.stat().st_size for p in root.glob("*/episodes.jsonl"))
    n_runs = len(list(root.glob("run-*/manifest.json")))
    print(f"{n_runs} runs, episodes.jsonl {data / 1e9:.2f} GB in all", flush=True)
    cold_page_s = cold_ready_s = cold_peak = float("nan")
    cold_page_cpu = cold_ready_cpu = float("nan")
    progress: list[str] = []
    if not warm_only:
        for stale in index.parent.glob(index.name + "*"):
            stale.unlink()
        # cold: no index
        server = Server(root, index)
        try:
            server.timed("/")
            cold_page_s = time.perf_counter() - server.t0
            cold_page_cpu = server.cpu_s()
            cold_ready_s = server.wait_ready()
            cold_ready_cpu = server.cpu_s()
            cold_peak = server.peak_mb()
        finally:
            server.stop()
        progress = [ln.rstrip() for ln in server.stderr if ln.startswith("indexing")]
    index_size = sum(p.stat().st_size for p in index.parent.glob(index.name + "*"))

    # warm: the same index, complete
    server = Server(root, index)
    try:
        warm_cpu = [server.cpu_s()]
        t_page, page = server.timed("/")
        warm_cpu.append(server.last_cpu_s)
        t_facets, facets_body = server.timed("/api/facets")
        warm_cpu.append(server.last_cpu_s)
        t_list, _ = server.timed("/api/episodes?offset=0&limit=200")
        warm_cpu.append(server.last_cpu_s)
        warm_s = time.perf_counter() - server.t0
        warm_after_listen = t_page + t_facets + t_list
        facets = json.loads(facets_body)
        intervals = page.decode().count('class="rk"')
        ranked_rows = page.decode().count('class="rank"')
        # transcripts of different runs
        open_s: list[tuple[float, float]] = []
        for k in range(opens):
            run = f"run-{(k * 37) % n_runs:03d}"
            _, body = server.timed(f"/api/episodes?run={run}&offset={k * 11}&limit=1")
            row = json.loads(body)["rows"][0]
            t, _ = server.timed(f"/api/episode?run={run}&id={_quote(row['id'])}")
            open_s.append((t, server.last_cpu_s))
        search_s: dict[str, tuple[float, float, int]] = {}
        queries = [(term, "") for term in SEARCHES] + list(FILTERED)
        for term, extra in queries:
            url = f"/api/episodes?q={_quote(term)}&limit=200" + (f"&{extra}" if extra else "")
            t, body = server.timed(url)
            label = repr(term) + (f" {extra}" if extra else "")
            search_s[label] = (t, server.last_cpu_s, json.loads(body)["total"])
        # the same depth as the page reaches it: continuing after the previous page's last row
        term, depth = DEEP
        _, body = server.timed(f"/api/episodes?q={term}&offset={depth - 200}&limit=200")
        previous = json.loads(body)
        url = f"/api/episodes?q={term}&offset={depth}&limit=200&after={previous['next']}"
        t, body = server.timed(url)
        label = f"{term!r} offset={depth} after the previous page (as the page appends)"
        search_s[label] = (t, server.last_cpu_s, json.loads(body)["total"])
        warm_peak = server.peak_mb()
    finally:
        server.stop()

    print("progress lines while indexing (first, last):")
    for line in progress[:1] + progress[-1:]:
        print(f"    {line}")
    print(f"{facets['total']:,} episodes indexed; index {index_size / 1e6:,.0f} MB", flush=True)
    print("measured against budgets:")
    _ratio("cold: launch -> first page (served from summaries)", cold_page_s, BUDGET_COLD_S, "s")
    print(f"    (server CPU until then: {cold_page_cpu:.1f} s)")
    _ratio("cold: launch -> index complete (page with rank intervals)", cold_ready_s, 60, "s")
    print(f"    (server CPU until then: {cold_ready_cpu:.1f} s)")
    _ratio("index size / episodes.jsonl size", index_size / data, BUDGET_INDEX_FRACTION, "")
    _ratio("warm: first page + facets + first list page (server up)", warm_after_listen, 1, "s")
    print(
        f"    (page {t_page:.3f} s, facets {t_facets:.3f} s, list {t_list:.3f} s; server CPU "
        f"{warm_cpu[1]:.2f} / {warm_cpu[2]:.2f} / {warm_cpu[3]:.2f} s; whole process from "
        f"launch incl. Python start-up: {warm_s:.2f} s, CPU until listening {warm_cpu[0]:.2f} s)"
    )
    walls = [w for w, _ in open_s]
    _ratio(
        f"transcript /api/episode (median of {len(open_s)})",
        statistics.median(walls),
        BUDGET_TRANSCRIPT_S,
        "s",
    )
    _ratio("  ... slowest", max(walls), BUDGET_TRANSCRIPT_S, "s")
    print(f"    (server CPU: median {statistics.median(c for _, c in open_s):.3f} s)")
    for label, (t, cpu, total) in search_s.items():
        _ratio(f"search {label} ({total:,} matches)", t, BUDGET_SEARCH_S, "s")
        print(f"    (server CPU {cpu:.2f} s)")
    _ratio("server peak memory, cold run (VmHWM)", cold_peak, BUDGET_RSS_MB, "MB")
    _ratio("server peak memory, warm run (VmHWM)", warm_peak, BUDGET_RSS_MB, "MB")
    print(f"live page: {ranked_rows} ranked rows, {intervals} with a rank interval shown")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--base", type=int, default=100, help="runs written; the rest copied")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples")
    parser.add_argument("--opens", type=int, default=12, help="transcripts to fetch")
    parser.add_argument("--keep", metavar="DIR", help="write the runs here and re-use them")
    parser.add_argument("--index", metavar="FILE", help="the index file (kept; default temporary)")
    parser.add_argument(
        "--warm-only", action="store_true", help="only the warm figures, over an existing --index"
    )
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        root = Path(args.keep) if args.keep else tmp / "runs"
        prepare(root, args.runs, min(args.base, args.runs), args.episodes, args.resamples)
        if not args.prepare_only:
            index = Path(args.index) if args.index else tmp / "view.sqlite"
            measure(root, index, args.opens, args.warm_only)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
