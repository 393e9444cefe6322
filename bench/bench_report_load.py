"""Size of the one-file report of a 117-episode run and its load time in headless Chromium.

Runs `todeval run booking` (rule system, agenda user, test set: 117 episodes) into a temporary
directory, builds the report (`todeval report`), then loads it from file:// in headless
Chromium (selenium with the system chromedriver) several times and prints, from the
Navigation Timing API: navigation start to DOMContentLoaded, to the load event, and to the
page's own `todeval-ready` mark (leaderboard shown, transcript browser built); plus the time
to open one transcript (click -> rendered). The report embeds the default 50 transcripts of
the run (`--transcripts`). Ratios are against a 1-second load budget.

Run: python bench/bench_report_load.py [--loads 7]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

from todeval.testing.browser import chromium_driver, missing_parts

LOAD_BUDGET_MS = 1000.0


_TIMING = """
const nav = performance.getEntriesByType('navigation')[0];
const ready = performance.getEntriesByName('todeval-ready')[0];
return {dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
        ready: ready ? ready.startTime : null,
        rows: document.querySelectorAll('table.lb[id^="lb-"] tbody tr').length};
"""

_OPEN = """
const done = arguments[0];
const row = document.querySelector('.ep-row'), key = row.getAttribute('data-ep');
const root = document.documentElement;
const t0 = performance.now();
const obs = new MutationObserver(() => {
  if (root.dataset.episode === key) {
    obs.disconnect();
    done([performance.now() - t0, document.querySelectorAll('#ep-detail .msg').length]);
  }
});
obs.observe(root, {attributes: true, attributeFilter: ['data-episode']});
row.click();
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=7, help="page loads to time (default 7)")
    args = parser.parse_args()
    missing = missing_parts()
    if missing:
        print(
            f"missing: {', '.join(missing)} (apt-get install chromium chromium-driver; "
            "pip install selenium)",
            file=sys.stderr,
        )
        return 1
    from todeval.cli import main as todeval

    with tempfile.TemporaryDirectory() as tmp:
        run, report = Path(tmp) / "run", Path(tmp) / "report.html"
        with contextlib.redirect_stdout(io.StringIO()):
            if todeval(["run", "booking", "--out", str(run), "--quiet"]) != 0:
                return 1
            t0 = time.perf_counter()
            if todeval(["report", str(run), "-o", str(report)]) != 0:
                return 1
        build_s = time.perf_counter() - t0
        size = report.stat().st_size
        driver = chromium_driver(Path(tmp) / "profile")
        try:
            samples = []
            for _ in range(args.loads):
                driver.get(report.as_uri())
                for _wait in range(200):
                    timing = driver.execute_script(_TIMING)
                    if timing["load"] and timing["ready"] is not None:
                        break
                    time.sleep(0.05)
                samples.append(timing)
            driver.set_script_timeout(30)
            open_ms, messages = driver.execute_async_script(_OPEN)
        finally:
            driver.quit()
    n = 117
    dcl = statistics.median(s["dcl"] for s in samples)
    load = statistics.median(s["load"] for s in samples)
    ready = statistics.median(s["ready"] for s in samples)
    print(
        f"report of a {n}-episode run: {size / 1e6:.2f} MB ({size / n / 1e3:.1f} kB/episode), "
        f"built in {build_s:.2f} s (todeval report, incl. loading the run)"
    )
    print(
        f"Chromium (headless, file://, median of {len(samples)} loads, "
        f"{samples[-1]['rows']} leaderboard row):"
    )
    lines = [
        ("navigation start -> page script done (leaderboard, browser ready)", ready),
        ("navigation start -> DOMContentLoaded", dcl),
        ("navigation start -> load event", load),
        (f"open one transcript (click -> rendered, {messages} messages)", open_ms),
    ]
    for label, ms in lines:
        print(f"  {label:<68}{ms:7.1f} ms")
    print(
        f"ratio of load time to the {LOAD_BUDGET_MS:.0f} ms budget: {load / LOAD_BUDGET_MS:.2f} "
        f"({LOAD_BUDGET_MS / load:.1f}x under budget)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
