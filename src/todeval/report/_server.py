"""``todeval view``: the report of every run under a directory, served on loopback.

Routes:

* ``/`` -- the report page (leaderboard, figures, ...), rebuilt from the runs' manifests and
  summaries when any run file changed; it embeds no episodes;
* ``/version.json`` -- a hash of the run files' sizes and modification times; the page polls
  it and reloads when it changes;
* ``/api/facets`` -- episode counts per run, outcome, failure class and group;
* ``/api/episodes?run=&outcome=&fc=&group=&label=&q=&offset=&limit=`` -- one page of list
  rows (run, id, outcome, group, labels, turns) matching the filters, and the total;
* ``/api/episode?run=&id=`` -- one full episode, read from its run's ``episodes.jsonl``.

Episodes are listed, filtered and searched from the SQLite index (:mod:`._index`), updated
incrementally before a request is answered whenever the run files changed. Nothing else is
served -- no files from disk -- and requests whose ``Host`` header does not name a loopback
address are refused when bound to loopback (a guard against DNS rebinding).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from todeval.registry import discover
from todeval.report._index import INDEX_NAME, EpisodeIndex, EpisodeQuery, IndexedRun, UpdateStats
from todeval.report._inputs import ReportInputs, discover_inputs, watch_files
from todeval.report._page import DEFAULT_TITLE, asset, build_html, content_security_policy
from todeval.report._payload import episode_view
from todeval.results.profile import ProfileBook
from todeval.serving import PageHandler, bind, is_loopback


def tree_version(root: Path) -> str:
    """A hash of (path, size, mtime) of every run file under ``root``."""
    digest = hashlib.sha256()
    for path in watch_files(root):
        try:
            st = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


@dataclass
class ViewState:
    """The served page and the episode index, brought up to date at most once per change of
    the run files (checked on every request)."""

    root: Path
    title: str = DEFAULT_TITLE
    poll_ms: int = 2000
    index_path: Path | None = None
    profiles: ProfileBook | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _version: str = ""
    _page: bytes = b""
    _facets: bytes = b""
    _checked: float = -1e9
    _index: EpisodeIndex | None = None
    last_update: UpdateStats | None = None

    @property
    def index(self) -> EpisodeIndex:
        if self._index is None:
            path = self.index_path or self.root / INDEX_NAME
            self._index = EpisodeIndex(path, self.root)
        return self._index

    def version(self) -> str:
        return tree_version(self.root)

    def sync(self, max_age_s: float = 0.0) -> str:
        """Update the index and rebuild the page if any run file changed; the version.

        ``max_age_s``: skip the check (a walk over the run files) if the last one is at most
        this old (a transcript fetch; the page's own poll notices changes)."""
        with self._lock:
            now = time.monotonic()
            if self._page and now - self._checked <= max_age_s:
                return self._version
            version = self.version()
            if version != self._version or not self._page:
                self._rebuild(version)
            self._checked = time.monotonic()
            return self._version

    def _rebuild(self, version: str) -> None:
        if self.profiles is None:
            self.profiles = ProfileBook(discover().profiles)
        inputs = discover_inputs(self.root, self.profiles, transcripts=0)
        runs = [
            IndexedRun(
                key=r.key,
                path=r.path,
                benchmark=r.manifest.benchmark,
                failure_label=self.profiles.get(r.manifest.benchmark).failure_label(),
            )
            for r in inputs.runs
        ]
        index = self.index
        self.last_update = index.update(runs)
        inputs.problems += index.problems()
        if not inputs.runs and not inputs.panels:
            inputs.problems.append(
                f"no run directories under {self.root} yet; this page refreshes when they appear"
            )
        self._page = self._html(inputs, version, index.counts())
        self._facets = json.dumps(index.facets()).encode()
        self._version = version

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
                return episode_view(run, record).model_dump_json().encode("utf-8")
        return None


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

        def _api(self, path: str, params: dict[str, str]) -> None:
            if path == "/api/facets":
                self._send(200, state.facets(), _JSON)
            elif path == "/api/episodes":
                try:
                    query = EpisodeQuery.model_validate(params)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"]) or "query"
                    self._send(400, _error(f"{where}: {err['msg']}"), _JSON)
                    return
                self._send(200, state.episodes(query), _JSON)
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
