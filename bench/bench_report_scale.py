"""The report and `todeval view` at leaderboard scale: 100 runs x 1,000 episodes.

Writes 100 synthetic booking run directories of 1,000 episodes each into a temporary directory
(real episodes of `todeval run booking` -- rule system against the agenda and corpus user
simulators -- re-used as templates under new task ids, with per-run failure rates from 5% to
65% over four failure classes; ~6.8 kB per episode, ~680 MB in all; each run's summary.json
written by `todeval.runner.summary.summarize` over the run's records, with --resamples
bootstrap resamples). Then measures, each against its budget:

* `todeval view` (its ViewState and server, in this process): time from start until the first
  page responds, the episode index built from scratch (budget 30 s);
* the peak memory of this process, which did the indexing and the serving
  (resource.getrusage maxrss; the data was written by a child process; budget 2 GB);
* the leaderboard page loading in headless Chromium: navigation start to the load event, and
  to the page's `todeval-ready` mark (episode list fetched and shown) (budget 2 s);
* opening a transcript: from the hash change to the transcript rendered (a MutationObserver on
  the page's data-episode attribute; median and max over several episodes of different runs;
  budget 200 ms);
* the static report of the same runs (`todeval report`, default cap of 50 transcripts per run):
  file size (budget 50 MB), plus its build time and peak memory;
* then one run gets 100 more episodes and the index is updated again (incremental: only the
  new lines are read), and a no-change check.

Prints "ratio = measured / budget" lines; asserts nothing. Run:

    python bench/bench_report_scale.py [--runs 100] [--episodes 1000] [--resamples 200]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BUDGET_START_S = 30.0
BUDGET_RSS_GB = 2.0
BUDGET_PAGE_S = 2.0
BUDGET_OPEN_MS = 200.0
BUDGET_STATIC_MB = 50.0

FAILURES = ("wrong_booking", "no_booking", "turn_cap", "format_violation:no_tool_call")


# --- writing the runs (in a child process) ----------------------------------------------------


def _templates(tmp: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    from todeval.cli import main as todeval

    with contextlib.redirect_stdout(io.StringIO()):
        for name, extra in (("agenda", []), ("corpus", ["--user", "corpus"])):
            code = todeval(["run", "booking", "--out", str(tmp / name), "--quiet", *extra])
            if code != 0:
                raise SystemExit(f"todeval run booking {extra}: exit {code}")
    manifest = json.loads((tmp / "agenda" / "manifest.json").read_text(encoding="utf-8"))
    records = [
        json.loads(line)
        for name in ("agenda", "corpus")
        for line in (tmp / name / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    good = [r for r in records if r["outcome"] == "success"]
    bad = [r for r in records if r["outcome"] != "success"]
    return manifest, good, bad


def _episode(base: dict[str, Any], n: int, failure: str | None) -> dict[str, Any]:
    r = json.loads(json.dumps(base))
    task = f"syn/{n:04d}-{base['task_id'].rsplit('/', 1)[-1]}"
    r["task_id"], r["episode_id"] = task, f"{task}#0"
    if failure is not None:
        r["labels"]["failure_class"] = failure
        r["metrics"]["booking.booking_accuracy"] = 0.0
        if failure == "turn_cap":
            r["outcome"], r["termination"], r["reason"] = "failure", "turn_cap", "turn cap"
            r["metrics"]["booking.turn_cap"] = 1.0
        elif failure.startswith("format_violation"):
            r["outcome"], r["termination"] = "aborted", "format_violation"
            r["reason"] = "format violation: no tool call"
            r["metrics"]["booking.aborted"] = 1.0
    return r


def generate(root: Path, n_runs: int, n_episodes: int, resamples: int) -> None:
    from todeval.core.records import EpisodeRecord
    from todeval.runner.summary import summarize

    root.mkdir(parents=True, exist_ok=True)
    manifest, good, bad = _templates(root.parent / "templates")
    for i in range(n_runs):
        rng = random.Random(i)
        fail_rate = 0.05 + 0.6 * i / max(1, n_runs - 1)
        run = root / f"run-{i:03d}"
        run.mkdir()
        m = json.loads(json.dumps(manifest))
        m["config"]["system"] = m["roles"]["system"]["player"] = f"sys-{i:03d}"
        m["players"]["system"] = f"sys-{i:03d}"
        m["config_hash"] = f"synthetic-{i:03d}"
        m["n_tasks"] = n_episodes
        if isinstance(m.get("selection"), dict):
            m["selection"]["n_tasks"] = n_episodes
        light = []
        with (run / "episodes.jsonl").open("w", encoding="utf-8") as fh:
            for n in range(n_episodes):
                if rng.random() < fail_rate:
                    r = _episode(rng.choice(bad), n, rng.choice(FAILURES))
                else:
                    r = _episode(rng.choice(good), n, None)
                fh.write(json.dumps(r, separators=(",", ":")) + "\n")
                light.append(EpisodeRecord.model_validate({**r, "events": [], "details": {}}))
        (run / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")
        summary = summarize(
            "booking",
            light,
            seed=m["seed"],
            resamples=resamples,
            success_metric="booking.booking_accuracy",
        )
        (run / "summary.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")


# --- measuring ----------------------------------------------------------------------------


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, body


def _ratio(label: str, measured: float, budget: float, unit: str) -> None:
    print(
        f"  {label:<58} {measured:9.2f} {unit:<3} budget {budget:7.1f} {unit:<3} "
        f"ratio = {measured / budget:.3f}"
    )


_TIMING = """
const nav = performance.getEntriesByType('navigation')[0];
const ready = performance.getEntriesByName('todeval-ready')[0];
return {load: nav.loadEventEnd, dcl: nav.domContentLoadedEventEnd,
        ready: ready ? ready.startTime : null,
        rows: document.querySelectorAll('table.lb[id^="lb-"] tbody tr').length,
        list: document.querySelectorAll('.ep-row').length};
"""

_OPEN = """
const [key, done] = arguments;
const root = document.documentElement;
const t0 = performance.now();
const obs = new MutationObserver(() => {
  if (root.dataset.episode === key) {
    obs.disconnect();
    done([performance.now() - t0, document.querySelectorAll('#ep-detail .msg').length]);
  }
});
obs.observe(root, {attributes: true, attributeFilter: ['data-episode']});
location.hash = '#ep=' + encodeURIComponent(key);
"""


def _append(run: Path, n: int) -> int:
    lines = (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for k in range(n):
        r = json.loads(lines[k])
        r["task_id"] = f"more/{k:04d}"
        r["episode_id"] = f"more/{k:04d}#0"
        out.append(json.dumps(r, separators=(",", ":")) + "\n")
    with (run / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("".join(out))
    return len(out)


def measure(tmp: Path, root: Path, args: argparse.Namespace) -> int:
    from todeval.report import ViewState, make_server
    from todeval.testing.browser import chromium_driver, missing_parts

    data_mb = sum(p.stat().st_size for p in root.glob("*/episodes.jsonl")) / 1e6
    n_runs = len(list(root.glob("*/manifest.json")))
    print(f"{n_runs} runs x {args.episodes:,} episodes, episodes.jsonl {data_mb:,.0f} MB in all")

    # the static report of the same runs (a child process: its own time and memory)
    report = tmp / "report.html"
    code = (
        "import resource, sys; from todeval.cli import main; rc = main(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); "
        "sys.exit(rc)"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "report",
            *sorted(map(str, root.glob("run-*"))),
            "-o",
            str(report),
        ],
        capture_output=True,
        text=True,
    )
    static_s = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 1
    static_rss_mb = int(proc.stderr.strip().splitlines()[-1]) / 1024
    static_mb = report.stat().st_size / 1e6

    # todeval view, in this process: start until the first page responds (index from scratch)
    index = tmp / "view.sqlite"
    t0 = time.perf_counter()
    state = ViewState(root, index_path=index)
    server = make_server(state, "127.0.0.1", 0)
    port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        status, page = _get(port, "/")
        start_s = time.perf_counter() - t0
        assert status == 200, status
        stats = state.last_update
        assert stats is not None
        index_mb = index.stat().st_size / 1e6
        facets = json.loads(_get(port, "/api/facets")[1])

        page_ms: list[float] = []
        ready_ms: list[float] = []
        open_ms: list[float] = []
        rows = listed = 0
        missing = missing_parts()
        if missing:
            print(f"  (no browser timings: missing {', '.join(missing)})")
        else:
            driver = chromium_driver(tmp / "chromium-profile")
            try:
                url = f"http://127.0.0.1:{port}/"
                for _ in range(args.loads):
                    driver.get(url)
                    timing: dict[str, Any] = {}
                    for _wait in range(600):
                        timing = driver.execute_script(_TIMING)
                        if timing["load"] and timing["ready"] is not None:
                            break
                        time.sleep(0.05)
                    page_ms.append(timing["load"])
                    ready_ms.append(timing["ready"])
                    rows, listed = timing["rows"], timing["list"]
                keys = []
                for k in range(args.opens):
                    run_no = (k * 37) % n_runs
                    body = _get(port, f"/api/episodes?run=run-{run_no:03d}&offset={k * 11}&limit=1")
                    row = json.loads(body[1])["rows"][0]
                    keys.append(f"{row['run']}/{row['id']}")
                driver.set_script_timeout(30)
                n_msgs = 0
                for key in keys:
                    ms, n_msgs = driver.execute_async_script(_OPEN, key)
                    open_ms.append(ms)
            finally:
                driver.quit()

        # one run grows by 100 episodes: the index reads only those lines
        added = _append(root / "run-000", 100)
        t0 = time.perf_counter()
        _get(port, "/api/facets")
        incr_s = time.perf_counter() - t0
        incr = state.last_update
        t0 = time.perf_counter()
        _get(port, "/api/facets")
        noop_ms = (time.perf_counter() - t0) * 1000
        after = json.loads(_get(port, "/api/facets")[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024

    print(
        f"index from scratch: {stats.lines:,} lines, {stats.bytes / 1e6:,.0f} MB read in "
        f"{stats.seconds:.1f} s ({stats.bytes / 1e6 / stats.seconds:.0f} MB/s), index file "
        f"{index_mb:,.0f} MB, FTS5 {'yes' if state.index.fts else 'no (LIKE)'}; "
        f"{facets['total']:,} episodes listed"
    )
    print(f"view page: {len(page) / 1e6:.2f} MB (no episodes embedded)")
    print(
        f"static report: {static_mb:.1f} MB, built in {static_s:.1f} s (todeval report, "
        f"peak memory {static_rss_mb:,.0f} MB)"
    )
    print("measured against budgets:")
    _ratio(
        "todeval view: start -> first page (index built from scratch)", start_s, BUDGET_START_S, "s"
    )
    _ratio("peak memory of the indexing/serving process (maxrss)", rss_gb, BUDGET_RSS_GB, "GB")
    if page_ms:
        _ratio(
            f"leaderboard page load in Chromium (median of {len(page_ms)}, load event)",
            statistics.median(page_ms) / 1000,
            BUDGET_PAGE_S,
            "s",
        )
        _ratio(
            "  ... to todeval-ready (episode list fetched and shown)",
            statistics.median(ready_ms) / 1000,
            BUDGET_PAGE_S,
            "s",
        )
        print(f"    ({rows} leaderboard rows, {listed} episodes in the first list page)")
        _ratio(
            f"open a transcript (median of {len(open_ms)}, hash change -> rendered)",
            statistics.median(open_ms),
            BUDGET_OPEN_MS,
            "ms",
        )
        _ratio("  ... slowest of them", max(open_ms), BUDGET_OPEN_MS, "ms")
        print(f"    (the last one has {n_msgs} messages)")
    _ratio("static report file size", static_mb, BUDGET_STATIC_MB, "MB")
    assert incr is not None
    print(
        f"incremental update after appending {added} episodes to one run: {incr_s * 1000:.0f} ms "
        f"for the request ({incr.lines} lines, {incr.bytes / 1e3:.0f} kB read, index "
        f"{incr.seconds * 1000:.0f} ms, page rebuilt); then {after['total']:,} episodes; "
        f"a request with nothing changed: {noop_ms:.0f} ms"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples")
    parser.add_argument("--loads", type=int, default=3, help="page loads to time")
    parser.add_argument("--opens", type=int, default=12, help="transcripts to open")
    parser.add_argument("--generate", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(Path(args.generate), args.runs, args.episodes, args.resamples)
        return 0
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        root = tmp / "runs"
        t0 = time.perf_counter()
        argv = [
            sys.executable,
            __file__,
            "--generate",
            str(root),
            "--runs",
            str(args.runs),
            "--episodes",
            str(args.episodes),
            "--resamples",
            str(args.resamples),
        ]
        if subprocess.run(argv).returncode != 0:
            return 1
        print(f"wrote the runs in {time.perf_counter() - t0:.0f} s (child process)")
        return measure(tmp, root, args)


if __name__ == "__main__":
    sys.exit(main())
