"""``todeval view``: the report of every run under a directory, served on loopback.

Routes:

* ``/`` -- the report page (leaderboard, figures, ...), rebuilt from the runs' manifests and
  summaries when any run file changed; it embeds no episodes;
* ``/version.json`` -- a hash of the run files' sizes and modification times; the page polls
  it and reloads when it changes;
* ``/api/facets`` -- episode counts per run, outcome, failure class and group;
* ``/api/episodes?run=&outcome=&fc=&group=&label=&q=&offset=&limit=&after=`` -- one page of list
  rows (run, id, outcome, group, labels, turns) matching the filters, the total, and ``next``
  (passed as ``after``, the page that follows costs the same at any depth);
* ``/api/episode?run=&id=`` -- one full episode, read from its run's ``episodes.jsonl``;
* ``/api/neighbours?at_run=&at_id=&run=&outcome=&fc=&group=&label=&q=`` -- the failures
  before and after that episode in the list's order under the filters (the episode page's
  previous / next failure).

Episodes are listed, filtered and searched from the SQLite index (:mod:`._index`), updated
incrementally before a request is answered whenever the run files changed. Nothing else is
served -- no files from disk -- and requests whose ``Host`` header does not name a loopback
address are refused when bound to loopback (a guard against DNS rebinding).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from todeval.panels.model import PANEL_FILE
from todeval.registry import discover
from todeval.report._index import (
    INDEX_NAME,
    EpisodeIndex,
    EpisodeQuery,
    IndexedRun,
    Progress,
    UpdateStats,
)
from todeval.report._inputs import ReportInputs, discover_inputs
from todeval.report._page import DEFAULT_TITLE, asset, build_html, content_security_policy
from todeval.report._payload import episode_view
from todeval.report.explain import Explainer, load_explainer
from todeval.results.profile import ProfileBook
from todeval.runner.store import EPISODES, MANIFEST, SUMMARY
from todeval.serving import PageHandler, bind, is_loopback

_WATCHED = frozenset({MANIFEST, PANEL_FILE, EPISODES, SUMMARY})


def tree_version(root: Path) -> str:
    """A hash of (path, size, mtime) of every run file under ``root`` (the files
    :func:`watch_files` names, found with one ``scandir`` per directory: at 1,000 runs this
    is checked on every request)."""
    digest = hashlib.sha256()
    stack = [(str(root), "")]
    while stack:
        path, rel = stack.pop()
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            try:
                if entry.name in _WATCHED and entry.is_file():
                    st = entry.stat()
                    digest.update(f"{rel}{entry.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
                elif not entry.name.startswith(".") and entry.is_dir():
                    subdirs.append((entry.path, f"{rel}{entry.name}/"))
            except OSError:
                continue
        stack.extend(reversed(subdirs))
    return digest.hexdigest()[:16]


class _Indexer:
    """Brings the index up to date in a thread of its own: a request waits for it a bounded
    time, then is answered from what is indexed so far (a cold start over a million episodes
    serves its first page from the runs' summaries while the index is built)."""

    def __init__(
        self,
        index: EpisodeIndex,
        progress: Progress | None,
        on_complete: Callable[[str], None] | None = None,
    ) -> None:
        self.index = index
        self.progress = progress
        self.on_complete = on_complete
        self._cond = threading.Condition()
        self._want: tuple[str, list[IndexedRun]] | None = None
        self._done = ""  # the tree version the index is complete for
        self._busy = False
        self._error: BaseException | None = None
        self.last: UpdateStats | None = None
        self.gate = threading.Event()
        """Cleared while a page is built: the update waits between runs (one core's worth
        of Python for the page rather than half of it)."""
        self.gate.set()

    def _run_done(self, stats: UpdateStats) -> None:
        self.gate.wait()
        if self.progress is not None:
            self.progress(stats)

    def request(self, version: str, runs: list[IndexedRun]) -> None:
        with self._cond:
            self._want = (version, runs)
            if not self._busy:
                self._busy = True
                threading.Thread(target=self._loop, name="todeval-indexer", daemon=True).start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._want is None:
                    self._busy = False
                    self._cond.notify_all()
                    return
                version, runs = self._want
                self._want = None
            try:
                stats = self.index.update(runs, self._run_done)
            except BaseException as exc:  # raised again to the request that waits
                with self._cond:
                    self._error, self._busy = exc, False
                    self._cond.notify_all()
                return
            with self._cond:
                self.last = stats
                complete = self._want is None
                if complete:
                    self._done = version
                self._cond.notify_all()
            # the page is rebuilt in a thread of its own: a request may hold the page's lock
            # while it waits for this thread's next update (a newer change of the run files)
            threading.Thread(
                target=self._finish,
                args=(version, stats, complete),
                name="todeval-page",
                daemon=True,
            ).start()

    def _finish(self, version: str, stats: UpdateStats, complete: bool) -> None:
        if complete and self.on_complete is not None:
            self.on_complete(version)
        stats.finished = True
        if self.progress is not None:
            self.progress(stats)

    def mark_complete(self, version: str) -> None:
        """The index is known to be complete for ``version`` (its page was kept for it)."""
        with self._cond:
            if not self._busy:
                self._done = version

    def complete(self, version: str) -> bool:
        return self._done == version

    def wait(self, version: str, timeout: float) -> bool:
        """Whether the index is complete for ``version`` within ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: self._done == version or self._error, timeout)
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            return self._done == version


@dataclass
class ViewState:
    """The served page and the episode index, brought up to date at most once per change of
    the run files (checked on every request).

    The index is updated in a thread of its own; a request waits for it at most ``wait_s``
    seconds, then the page is built from the runs' summaries (with the episodes indexed so
    far, and without rank intervals: they need every run's task values) and rebuilt when the
    index is complete -- its version changes then, so an open page reloads. The last page
    built with a complete index is kept in the index file: a restart over unchanged runs
    serves it without reading them."""

    root: Path
    title: str = DEFAULT_TITLE
    poll_ms: int = 2000
    index_path: Path | None = None
    profiles: ProfileBook | None = None
    wait_s: float = 10.0
    progress: Progress | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _version: str = ""
    _complete: bool = False
    _page: bytes = b""
    _facets: bytes = b""
    _checked: float = -1e9
    _index: EpisodeIndex | None = None
    _indexer: _Indexer | None = None
    _inputs: ReportInputs | None = None
    _explainers: dict[str, Explainer | None] = field(default_factory=dict)
    _explainers_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def index(self) -> EpisodeIndex:
        if self._index is None:
            path = self.index_path or self.root / INDEX_NAME
            self._index = EpisodeIndex(path, self.root)
        return self._index

    @property
    def indexer(self) -> _Indexer:
        if self._indexer is None:
            self._indexer = _Indexer(self.index, self.progress, self._indexed)
        return self._indexer

    @property
    def complete(self) -> bool:
        """The served page was built with a complete index."""
        return self._complete

    @property
    def last_update(self) -> UpdateStats | None:
        return self.indexer.last

    def version(self) -> str:
        """The run files' hash, marked while the index is incomplete for them (the page
        reloads when it changes: a run wrote an episode, or the index caught up)."""
        version = tree_version(self.root)
        return version if self.indexer.complete(version) else version + "-indexing"

    def _page_key(self, version: str) -> str:
        from todeval import __version__

        parts = (version, self.title, str(self.poll_ms), self.index.path.name, __version__)
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]

    def sync(self, max_age_s: float = 0.0) -> str:
        """Update the index and rebuild the page if any run file changed; the version.

        ``max_age_s``: skip the check (a walk over the run files) if the last one is at most
        this old (a transcript fetch; the page's own poll notices changes)."""
        with self._lock:
            now = time.monotonic()
            if self._page and self._complete and now - self._checked <= max_age_s:
                return self._version
            version = tree_version(self.root)
            if version == self._version and self._page and self._complete:
                self._checked = now
                return version
            if not self._page:  # a page an earlier process built over these very files
                cached = self.index.cached_page(self._page_key(version))
                if cached is not None:
                    self._page, self._facets = cached
                    self._version, self._complete = version, True
                    self.indexer.mark_complete(version)
                    self._inputs = None
                    self._checked = time.monotonic()
                    return version
            if version != self._version or self._inputs is None:
                self._inputs = self._discover()
                self.indexer.request(version, self._runs(self._inputs))
                complete = self.indexer.wait(version, self.wait_s)
            else:  # still indexing the files the page was built for: no waiting again
                complete = self.indexer.wait(version, 0.0)
            if version != self._version or complete != self._complete or not self._page:
                self._build(self._inputs, version, complete)
            if complete:
                self._inputs = None
            self._checked = time.monotonic()
            return self._version

    def _indexed(self, version: str) -> None:
        """The index caught up with ``version`` (in the indexing thread): the page a request
        built meanwhile from the summaries is rebuilt complete, and kept, without waiting for
        the next request."""
        with self._lock:
            if version == self._version and not self._complete and self._inputs is not None:
                self._build(self._inputs, version, True)
                self._inputs = None

    def _discover(self) -> ReportInputs:
        if self.profiles is None:
            self.profiles = ProfileBook(discover().profiles)
        return discover_inputs(self.root, self.profiles, transcripts=0)

    def _runs(self, inputs: ReportInputs) -> list[IndexedRun]:
        assert self.profiles is not None
        out = []
        for r in inputs.runs:
            profile = self.profiles.get(r.manifest.benchmark)
            out.append(
                IndexedRun(
                    key=r.key,
                    path=r.path,
                    benchmark=r.manifest.benchmark,
                    failure_label=profile.failure_label(),
                    metric=profile.primary,
                )
            )
        return out

    def _build(self, inputs: ReportInputs, version: str, complete: bool) -> None:
        self.indexer.gate.clear()
        try:
            self._build_page(inputs, version, complete)
        finally:
            self.indexer.gate.set()

    def _build_page(self, inputs: ReportInputs, version: str, complete: bool) -> None:
        index = self.index
        counts = index.counts()
        problems = list(inputs.problems) + index.problems()
        if complete:  # every run's task values: the boards get their rank intervals
            values = index.task_values()
            for run in inputs.runs:
                run.task_values = values.get(run.key, {})
        else:
            done = sum(1 for r in inputs.runs if r.key in counts)
            problems.append(
                f"the episode index is being built ({done:,} of {len(inputs.runs):,} runs "
                f"so far): the list shows the episodes indexed until now, the boards their "
                "rank intervals once it is complete; this page reloads then"
            )
        if not inputs.runs and not inputs.panels:
            problems.append(
                f"no run directories under {self.root} yet; this page refreshes when they appear"
            )
        shown = ReportInputs(
            runs=inputs.runs,
            panels=inputs.panels,
            scores=inputs.scores,
            problems=problems,
            profiles=inputs.profiles,
            transcripts=inputs.transcripts,
        )
        page_version = version if complete else version + "-indexing"
        self._page = self._html(shown, page_version, counts)
        self._facets = json.dumps(index.facets()).encode()
        self._version, self._complete = version, complete
        if complete:
            index.store_page(self._page_key(version), self._page, self._facets)
        for run in inputs.runs:  # the page holds them now
            run.task_values = {}

    def _html(self, inputs: ReportInputs, version: str, counts: dict[str, int]) -> bytes:
        name = self.index.path.name
        html = build_html(
            inputs,
            title=self.title,
            live=True,
            version=version,
            poll_ms=self.poll_ms,
            mode="api",
            indexed=counts,
            index_name=name,
        )
        return html.encode("utf-8")

    def page(self) -> bytes:
        self.sync()
        return self._page

    def facets(self) -> bytes:
        self.sync()
        return self._facets

    def episodes(self, query: EpisodeQuery) -> bytes:
        self.sync()
        return json.dumps(self.index.query(query), ensure_ascii=False).encode("utf-8")

    def episode(self, run: str, episode_id: str) -> bytes | None:
        for attempt in range(2):
            self.sync(max_age_s=1.0 if attempt == 0 else 0.0)
            record = self.index.record(run, episode_id)
            if record is not None:
                view = episode_view(run, record, self._explainer(record.benchmark))
                return view.model_dump_json(exclude_none=True).encode("utf-8")
        return None

    def _explainer(self, benchmark: str) -> Explainer | None:
        """The benchmark's score explainer (its profile's ``explainer``), loaded once."""
        with self._explainers_lock:
            if benchmark not in self._explainers:
                if self.profiles is None:
                    self.profiles = ProfileBook(discover().profiles)
                reference = self.profiles.get(benchmark).explainer
                self._explainers[benchmark] = load_explainer(reference)
            return self._explainers[benchmark]

    def prepare_transcripts(self) -> None:
        """Load what a transcript needs (the profiles and the indexed benchmarks' explainers)
        before the first one is asked for: a restart over a kept page has loaded nothing, and
        the first transcript took 0.17 s instead of 0.007 (1,000 runs). Meant for a
        background thread once the server listens; a failure here is left to the request."""
        with contextlib.suppress(Exception):
            for benchmark in self.index.benchmarks():
                self._explainer(benchmark)

    def neighbours(self, query: EpisodeQuery, run: str, episode_id: str) -> bytes:
        self.sync()
        found = self.index.neighbours(query, run, episode_id)
        return json.dumps(found, ensure_ascii=False).encode("utf-8")


def _params(query: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}


_JSON = "application/json; charset=utf-8"


def _error(message: str) -> bytes:
    return json.dumps({"error": message}).encode()


def make_handler(state: ViewState, loopback: bool) -> type[PageHandler]:
    class Handler(PageHandler):
        server_version = "todeval-view"
        csp = content_security_policy(asset("report.js"), header=True)

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send(code, body, ctype)

        def _query(self, params: dict[str, str]) -> EpisodeQuery | None:
            """The list query of ``params``; None once a 400 naming the bad field is sent."""
            try:
                return EpisodeQuery.model_validate(params)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "query"
                self._send(400, _error(f"{where}: {err['msg']}"), _JSON)
                return None

        def _api(self, path: str, params: dict[str, str]) -> None:
            if path == "/api/facets":
                self._send(200, state.facets(), _JSON)
            elif path == "/api/episodes":
                query = self._query(params)
                if query is None:
                    return
                self._send(200, state.episodes(query), _JSON)
            elif path == "/api/neighbours":
                at_run, at_id = params.pop("at_run", ""), params.pop("at_id", "")
                if not at_run or not at_id:
                    self._send(400, _error("at_run and at_id are required"), _JSON)
                    return
                query = self._query(params)
                if query is None:
                    return
                self._send(200, state.neighbours(query, at_run, at_id), _JSON)
            elif path == "/api/episode":
                run, episode_id = params.get("run", ""), params.get("id", "")
                if not run or not episode_id:
                    self._send(400, _error("run and id are required"), _JSON)
                    return
                body = state.episode(run, episode_id)
                if body is None:
                    self._send(404, _error(f"no episode {episode_id} in run {run}"), _JSON)
                else:
                    self._send(200, body, _JSON)
            else:
                self._send(404, _error("not found"), _JSON)

        def do_GET(self) -> None:
            if not self.host_ok():
                return
            url = urlsplit(self.path)
            path = url.path
            if path in ("/", "/index.html"):
                self._send(200, state.page(), "text/html; charset=utf-8")
            elif path == "/version.json":
                body = json.dumps({"version": state.version()}).encode()
                self._send(200, body, "application/json")
            elif path.startswith("/api/"):
                self._api(path, _params(url.query))
            elif path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            else:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")

        def do_HEAD(self) -> None:
            self.do_GET()

    Handler.loopback = loopback
    return Handler


def make_server(state: ViewState, host: str, port: int) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; ``port`` 0 picks a free port."""
    return bind(make_handler(state, is_loopback(host)), host, port)
