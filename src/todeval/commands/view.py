"""``todeval view RUNS_DIR [--port 8765] [--host 127.0.0.1] [--index FILE]``: the report, live.

Serves the report of every run directory (and panel) found under RUNS_DIR with the standard
library's HTTP server, on loopback by default. Episodes are listed and searched from an SQLite
index (default ``RUNS_DIR/.todeval-view.sqlite``), built before serving and then updated
incrementally; the page fetches one transcript at a time. The page polls a version hash of
the run files and reloads when a run writes an episode. Ctrl-C stops the server (exit 0).

A long index build (a first start over many runs) does not hold up the page: it is served
from the runs' summaries after a few seconds while the index is built, with the progress
(runs indexed of all, episodes per second) printed on stderr.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from todeval.errors import BadInputError, UsageError
from todeval.registry import Command, Registry

if TYPE_CHECKING:
    from todeval.report import UpdateStats

DEFAULT_PORT = 8765
FIRST_PAGE_WAIT_S = 5.0  # then the page is served from the summaries while indexing goes on
PROGRESS_EVERY_S = 2.0


class IndexProgress:
    """Prints an index build's progress on stderr (every few seconds once it has run for
    a while) and, once, the line saying the index is ready."""

    def __init__(self, index: Path) -> None:
        self.index = index
        self.t0 = time.perf_counter()
        self.ready = False
        self._last = self.t0
        self._lock = threading.Lock()

    def __call__(self, stats: UpdateStats) -> None:
        with self._lock:
            now = time.perf_counter()
            if stats.finished:
                if not self.ready:
                    self.ready = True
                    self.say(f"{stats.lines:,} new line(s)")
                return
            if now - self._last < PROGRESS_EVERY_S:
                return
            self._last = now
            rate = stats.lines / stats.seconds if stats.seconds > 0 else 0.0
            print(
                f"indexing: {stats.done_runs:,} of {stats.total_runs:,} runs, "
                f"{stats.lines:,} episodes ({stats.bytes / 1e6:,.0f} MB) in {stats.seconds:.0f} s, "
                f"{rate:,.0f} episodes/s",
                file=sys.stderr,
                flush=True,
            )

    def say(self, what: str) -> None:
        self.ready = True
        print(
            f"index {self.index} ({what}, ready in {time.perf_counter() - self.t0:.1f} s)",
            file=sys.stderr,
            flush=True,
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from todeval.report import DEFAULT_TITLE, INDEX_NAME

    parser.add_argument("runs_dir", metavar="RUNS_DIR", help="directory holding run directories")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything else exposes your transcripts)",
    )
    parser.add_argument(
        "--poll", type=float, default=2.0, help="seconds between the page's update checks"
    )
    parser.add_argument("--title", default=DEFAULT_TITLE, help="page title")
    parser.add_argument(
        "--index",
        metavar="FILE",
        help=f"the episode index (SQLite; default RUNS_DIR/{INDEX_NAME}), updated incrementally",
    )


def run(args: argparse.Namespace) -> int:
    from todeval.report import INDEX_NAME, ViewState, make_server
    from todeval.serving import is_loopback, serve_until_interrupted

    root = Path(args.runs_dir)
    if not root.is_dir():
        raise BadInputError(f"{root}: not a directory")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: not a port number (0-65535)")
    from todeval.results.rescore import refuse_mixed_runs, runs_under

    refuse_mixed_runs(runs_under(root))  # runs graded by different scorer versions: refused
    index = Path(args.index) if args.index else root / INDEX_NAME
    if not index.parent.is_dir():
        raise UsageError(f"--index {index}: no such directory {index.parent}")
    progress = IndexProgress(index)
    state = ViewState(
        root,
        title=args.title,
        poll_ms=max(250, int(args.poll * 1000)),
        index_path=index,
        wait_s=FIRST_PAGE_WAIT_S,
        progress=progress,
    )
    try:
        server = make_server(state, args.host, args.port)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); "
            "choose another --port"
        ) from None
    try:
        state.sync()  # the page, and the index (or as much of it as is built in a few seconds)
    except BaseException:
        server.server_close()
        raise
    if state.complete and state.last_update is None:
        progress.say("nothing new")  # the page kept for these files is served
    host, port = str(server.server_address[0]), int(server.server_address[1])
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        print(
            f"todeval: warning: serving on {host}, reachable from other machines",
            file=sys.stderr,
        )
    print(f"serving {root} at http://{shown}:{port}/ (Ctrl-C to stop)", flush=True)
    if not state.complete:
        print(
            f"indexing {index} in the background; the page is served from the runs' "
            "summaries meanwhile",
            file=sys.stderr,
            flush=True,
        )
    threading.Thread(target=state.prepare_transcripts, name="prepare", daemon=True).start()
    serve_until_interrupted(server)
    return 0


def register(registry: Registry) -> None:
    registry.add(
        "top",
        Command(
            "view",
            "serve the report of every run under a directory on 127.0.0.1, refreshing live",
            add_arguments,
            run,
        ),
    )
