"""The episode index of ``todeval view``: one SQLite file over every run under a directory.

``todeval view`` serves any number of runs without holding their episodes in memory: the page
lists episodes from this index and fetches one transcript at a time. The index (default
``RUNS_DIR/.todeval-view.sqlite``) holds, per episode, its list row (id, outcome, group,
labels, turns), where its line is in ``episodes.jsonl`` (byte offset and length; the
transcript itself is read from the run's file on demand), its value of the benchmark's
primary metric (for the boards' rank intervals) and its search text: a contentless FTS5 table
(only the words' postings, no copy of the text) when SQLite has FTS5, else a plain table
searched with ``LIKE``. With FTS5 each episode's text also carries hidden words for its run,
outcome, failure class, group and labels (:func:`facet_word`): a search with any of those
filters is one FTS5 query, counted from the postings. Per run it keeps the counts the filters
show and each task's mean of the primary metric, so neither needs a pass over the episodes.
The index stays a fraction of the runs' size (see docs/report.md).

It is built incrementally. Per run directory it records how far ``episodes.jsonl`` was read
(byte offset, line count) and the file's identity (inode, and digests of its first bytes and
of the bytes before the offset). On each update only the lines appended since are read; a
file that was replaced, shrunk or rewritten is indexed again from the start. A torn last line
(a run killed mid-write) is left for the next update. An episode that appears again (re-run
after an infrastructure error) replaces its earlier row, as when the run is read. Episode
row ids are never re-used, so the search postings of a removed row (a contentless table
cannot delete them without the original text) match nothing; when they outnumber the live
rows the index is built again from scratch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.core.events import MODEL_CALL, Event
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.errors import BadInputError
from todeval.runner.store import EPISODES

INDEX_NAME = ".todeval-view.sqlite"
INDEX_SCHEMA = "3"
_PROBE = 4096  # bytes hashed at the start of the file and before the offset
_BATCH = 250  # lines per insert batch (written while the next is parsed)


class IndexedRun(BaseModel):
    """A run the index should cover: its current key, directory and benchmark."""

    key: str
    path: Path
    benchmark: str
    failure_label: str | None = None
    metric: str = ""
    """The benchmark's primary metric: each task's mean of it feeds the rank intervals."""


class TaskValues(Mapping[str, float]):
    """One run's task means, as compact as an array: a column per task id, shared by every
    run (``columns``), and this run's values in those columns (a dict per run would take
    ~36 kB at 1,000 tasks, this 9 kB)."""

    __slots__ = ("_columns", "_has", "_n", "_values")

    def __init__(self, columns: dict[str, int], values: dict[str, float]) -> None:
        for task in values:
            columns.setdefault(task, len(columns))
        self._columns = columns
        self._values = array("d", bytes(8 * len(columns)))
        self._has = bytearray(len(columns))
        for task, value in values.items():
            at = columns[task]
            self._values[at] = value
            self._has[at] = 1
        self._n = len(values)

    def _column(self, task: str) -> int | None:
        at = self._columns.get(task)
        return at if at is not None and at < len(self._has) and self._has[at] else None

    def __getitem__(self, task: str) -> float:
        at = self._column(task)
        if at is None:
            raise KeyError(task)
        return self._values[at]

    def __contains__(self, task: object) -> bool:
        return isinstance(task, str) and self._column(task) is not None

    def __iter__(self) -> Iterator[str]:
        has, size = self._has, len(self._has)
        return (task for task, at in self._columns.items() if at < size and has[at])

    def __len__(self) -> int:
        return self._n


class EpisodeQuery(BaseModel):
    """The filters of ``/api/episodes`` (empty string: no filter)."""

    model_config = ConfigDict(extra="forbid")

    run: str = ""
    outcome: str = ""
    fc: str = Field("", description="value of the benchmark's failure label")
    group: str = ""
    label: str = Field("", description="name:value of any label")
    q: str = Field("", description="search text")
    offset: int = Field(0, ge=0)
    limit: int = Field(200, ge=1, le=2000)
    after: str = Field(
        "",
        pattern=r"^([fs]:\d{1,18}:\d{1,18})?$",
        description="the `next` of the previous page of the same filters: continue after its "
        "last row instead of counting `offset` rows from the start (a search's pages then "
        "cost the same at any depth); `offset` still says how many rows came before",
    )


class _Line(BaseModel):
    """What the index reads of an episode line (the events are read as text, see
    :func:`events_text`; other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    episode_id: str
    task_id: str
    trial: int
    group: str = ""
    outcome: Outcome
    reason: str = ""
    turns: int = 0
    labels: dict[str, str] = Field(default_factory=dict)
    metrics: dict[str, float | None] = Field(default_factory=dict)


class _Events(BaseModel):
    model_config = ConfigDict(extra="ignore")

    events: list[Event] = Field(default_factory=list)


@dataclass
class UpdateStats:
    """What one :meth:`EpisodeIndex.update` did."""

    runs: int = 0
    lines: int = 0
    bytes: int = 0
    reindexed: list[str] = field(default_factory=list)
    removed: int = 0
    seconds: float = 0.0
    total_runs: int = 0
    """The runs this update covers (``runs`` counts those that had new lines)."""
    done_runs: int = 0
    """The runs brought up to date so far (for progress reports)."""
    finished: bool = False
    """Set on the last report of an update (the index is complete)."""


Progress = Callable[[UpdateStats], None]


_EVENTS_START = b'"events":['
_EVENTS_END = b'],"usage":'
_MODEL_CALL = b'"type":"model_call"'


def events_text(raw: bytes) -> str:
    """The events of an episode line as JSON text: kinds, actors and every data key and value
    but a model call's messages (the tokenizer skips the punctuation). Cut out of the line as
    written by the runner (``events`` then ``usage``) without parsing it when it holds no model
    call; any other line is parsed."""
    start = raw.find(_EVENTS_START)
    end = raw.rfind(_EVENTS_END)
    if start >= 0 and end > start and _MODEL_CALL not in raw:
        data = raw[start + len(_EVENTS_START) - 1 : end + 1]
    else:  # of a model call only its reply: the prompts it was sent repeat in every episode
        events = _Events.model_validate_json(raw).events
        data = json.dumps(
            [
                [ev.kind, ev.actor, ev.data.get("reply") if ev.type == MODEL_CALL else ev.data]
                for ev in events
            ],
            ensure_ascii=False,
        ).encode()
    # escaped line breaks and tabs would glue the words around them together
    for escape in (b"\\n", b"\\t", b"\\r"):
        if escape in data:
            data = data.replace(escape, b"  ")
    return data.decode("utf-8", "replace")


def read_line(raw: bytes) -> _Line:
    """The list fields of an episode line. A line as the runner writes it (``events`` then
    ``usage``) is parsed without its events, the bulk of it; any other line, or one whose cut
    does not parse, in full."""
    start = raw.find(_EVENTS_START)
    end = raw.rfind(_EVENTS_END)
    if start > 0 and end > start:
        try:
            return _Line.model_validate_json(raw[:start] + raw[end + 2 :])
        except (ValidationError, ValueError):
            pass
    return _Line.model_validate_json(raw)


def search_text(line: _Line, raw: bytes) -> str:
    """Everything the search matches: ids, group, outcome, reason, labels and every event's
    kind and data (keys and values) -- the fields a static report's search looks at."""
    parts = [line.episode_id, line.task_id, line.group, line.outcome.value, line.reason]
    for k, v in line.labels.items():
        parts += (k, v)
    parts.append(events_text(raw))
    return "\n".join(parts)


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_FACET_MARK = "\ue000"  # a private-use character: a token character to FTS5, never in \w


def facet_word(kind: str, value: str) -> str:
    """The hidden search word of one filter value (``kind``: ``o`` outcome, ``f`` failure
    class, ``g`` group, ``r`` run id, ``l`` a label's name and value). Each episode's search
    text carries its own, so a search with filters is one FTS5 query, counted from the
    postings (no join over the episodes). It starts with a private-use character, which the
    tokenizer keeps in a word and :func:`search_terms` never yields: no search typed can match
    or prefix one."""
    return _FACET_MARK + kind + hashlib.sha256(value.encode()).hexdigest()[:16]


def search_terms(q: str) -> list[str]:
    """The words of a search, split as the index's tokenizer splits text (letters and digits;
    FTS5 matches the last as a word prefix, the others as whole words)."""
    return _WORD.findall(q.lower())


def _quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _probe(path: Path, offset: int) -> tuple[str, str]:
    """Digests of the file's first bytes and of the bytes before ``offset``."""
    with path.open("rb") as fh:
        head = fh.read(min(_PROBE, offset))
        start = max(0, offset - _PROBE)
        fh.seek(start)
        tail = fh.read(offset - start)
    return _digest(head), _digest(tail)


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    key TEXT,
    pos INTEGER NOT NULL DEFAULT 0,
    benchmark TEXT NOT NULL DEFAULT '',
    fail_label TEXT NOT NULL DEFAULT '',
    metric TEXT NOT NULL DEFAULT '',
    inode INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    head TEXT NOT NULL DEFAULT '',
    tail TEXT NOT NULL DEFAULT '',
    problem TEXT,
    facets TEXT NOT NULL DEFAULT '[]',
    task_values TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_pos ON runs (pos);
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    task TEXT NOT NULL,
    trial INTEGER NOT NULL,
    episode_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    grp TEXT NOT NULL,
    fail TEXT NOT NULL,
    labels TEXT NOT NULL,
    turns INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    value REAL
);
CREATE INDEX episodes_order ON episodes (run, offset);
CREATE INDEX episodes_id ON episodes (run, episode_id);
CREATE TABLE labels (ep INTEGER NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX labels_value ON labels (name, value);
CREATE INDEX labels_ep ON labels (ep);
CREATE TABLE pages (key TEXT PRIMARY KEY, page BLOB NOT NULL, facets BLOB NOT NULL);
"""

_LIST_COLUMNS = "r.key, e.episode_id, e.outcome, e.grp, e.labels, e.turns"
_CURSOR_COLUMNS = ", r.pos, e.offset"  # where a row is in the list's order (a page's `next`)
_SUCCESS = Outcome.SUCCESS.value  # listed after every other outcome
_PREFIX_WORDS = 16  # a prefix starting at most this many words is searched as their OR
_FEW_MATCHES = 20_000  # a search matching at most this many: its matches are sorted
_REBUILD_AT = 10_000  # orphaned search rows tolerated beyond the number of live episodes


def fts5_available() -> bool:
    with closing(sqlite3.connect(":memory:")) as db:
        try:
            db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
        except sqlite3.OperationalError:
            return False
    return True


class EpisodeIndex:
    """The index file; every method opens its own connection (safe across server threads).

    Only one thread or process should :meth:`update` at a time (the view server holds a lock);
    readers never block it (write-ahead log)."""

    def __init__(self, path: Path, root: Path, *, fts: bool | None = None) -> None:
        self.path = path
        self.root = root
        self._want_fts = fts5_available() if fts is None else fts
        self.fts = self._open()

    # --- connection and schema ----------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # one thread at a time: a request's own connection, or an update and its writer
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA synchronous = OFF")  # a cache: rebuilt if ever damaged
        db.execute("PRAGMA temp_store = MEMORY")
        return db

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with closing(self._connect()) as db:
            yield db

    def _open(self) -> bool:
        """Create or check the schema; an index of another schema is rebuilt. Returns FTS."""
        try:
            with self._db() as db:
                db.execute("PRAGMA journal_mode = WAL")
                tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
                meta: dict[str, str] = {}
                if "meta" in tables:
                    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
                fts = meta.get("fts") == "1"
                if meta.get("schema") == INDEX_SCHEMA and fts == self._want_fts:
                    return fts
                for (name,) in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'search_%'"
                ).fetchall():
                    db.execute(f'DROP TABLE IF EXISTS "{name}"')
                db.execute("VACUUM")
                db.executescript(_SCHEMA)
                if self._want_fts:
                    db.execute(  # contentless: the postings only, no copy of the text
                        "CREATE VIRTUAL TABLE search "
                        "USING fts5(text, content='', detail=none, columnsize=0)"
                    )
                else:
                    db.execute("CREATE TABLE search (rowid INTEGER PRIMARY KEY, text TEXT)")
                db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ("schema", INDEX_SCHEMA),
                        ("fts", "1" if self._want_fts else "0"),
                        ("next_id", "1"),
                        ("orphans", "0"),
                    ],
                )
                return self._want_fts
        except sqlite3.DatabaseError as exc:
            raise BadInputError(
                f"{self.path}: cannot use it as the episode index ({exc}); delete it or "
                "choose another with --index"
            ) from None

    # --- updating ---------------------------------------------------------------------------

    def _stored_path(self, path: Path) -> str:
        try:
            return os.path.relpath(path, self.root)
        except ValueError:  # another drive (Windows)
            return str(path.resolve())

    def _file(self, stored: str) -> Path:
        return self.root / stored

    def _meta_int(self, db: sqlite3.Connection, key: str) -> int:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def _set_meta(self, db: sqlite3.Connection, key: str, value: object) -> None:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def _too_many_orphans(self) -> bool:
        """Removed rows still in the contentless search table outnumber the live ones."""
        if not self.fts:
            return False
        with self._db() as db:
            live = int(db.execute("SELECT count(*) FROM episodes").fetchone()[0])
            return self._meta_int(db, "orphans") > live + _REBUILD_AT

    def _reset(self) -> None:
        """Start again from an empty index (the file is only a cache of the run files)."""
        with self._db() as db:
            db.execute("DELETE FROM meta WHERE key = 'schema'")
        self.fts = self._open()

    def update(self, runs: Sequence[IndexedRun], progress: Progress | None = None) -> UpdateStats:
        """Bring the index up to date with ``runs`` (in display order); others are dropped.

        ``progress`` is called with the running figures after each run that had new lines
        (from the updating thread)."""
        import time

        t0 = time.perf_counter()
        stats = UpdateStats(total_runs=len(runs))
        if self._too_many_orphans():
            self._reset()
        with self._db() as db:
            known = {
                row[1]: row
                for row in db.execute(
                    "SELECT id, path, inode, offset, lines, head, tail, fail_label, metric "
                    "FROM runs"
                )
            }
            wanted = {self._stored_path(r.path): (pos, r) for pos, r in enumerate(runs)}
            for stored, row in known.items():
                if stored not in wanted:
                    db.execute("BEGIN")
                    self._drop_episodes(db, row[0])
                    db.execute("DELETE FROM runs WHERE id = ?", (row[0],))
                    db.execute("COMMIT")
                    stats.removed += 1
            for stored, (pos, run) in wanted.items():
                before = stats.lines
                self._update_run(db, stored, pos, run, known.get(stored), stats)
                stats.done_runs += 1
                if progress is not None and stats.lines > before:
                    stats.seconds = time.perf_counter() - t0
                    progress(stats)
        stats.seconds = time.perf_counter() - t0
        return stats

    def _drop_episodes(self, db: sqlite3.Connection, run_id: int) -> None:
        db.execute(
            "DELETE FROM labels WHERE ep IN (SELECT id FROM episodes WHERE run = ?)", (run_id,)
        )
        if self.fts:  # a contentless table keeps the postings: they match no episode any more
            gone = db.execute("SELECT count(*) FROM episodes WHERE run = ?", (run_id,)).fetchone()
            self._set_meta(db, "orphans", self._meta_int(db, "orphans") + int(gone[0]))
        else:
            db.execute(
                "DELETE FROM search WHERE rowid IN (SELECT id FROM episodes WHERE run = ?)",
                (run_id,),
            )
        db.execute("DELETE FROM episodes WHERE run = ?", (run_id,))
        db.execute("UPDATE runs SET facets = '[]', task_values = '{}' WHERE id = ?", (run_id,))

    def _update_run(
        self,
        db: sqlite3.Connection,
        stored: str,
        pos: int,
        run: IndexedRun,
        row: tuple[Any, ...] | None,
        stats: UpdateStats,
    ) -> None:
        file = run.path / EPISODES
        fail_label = run.failure_label or ""
        try:
            st = file.stat()
            inode, size = st.st_ino, st.st_size
        except OSError:
            inode, size = 0, 0
        db.execute("BEGIN")
        if row is None:
            cur = db.execute(
                "INSERT INTO runs (path, key, pos, benchmark, fail_label, metric) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (stored, run.key, pos, run.benchmark, fail_label, run.metric),
            )
            run_id, offset, lines = int(cur.lastrowid or 0), 0, 0
        else:
            run_id, _, old_inode, offset, lines, head, tail, old_fail, old_metric = row
            rewritten = (
                old_inode != inode
                or size < offset
                or old_fail != fail_label
                or old_metric != run.metric
                or (offset > 0 and _probe(file, offset) != (head, tail))
            )
            if rewritten and offset > 0:
                self._drop_episodes(db, run_id)
                stats.reindexed.append(run.key)
            if rewritten:
                offset, lines = 0, 0
                db.execute("UPDATE runs SET problem = NULL WHERE id = ?", (run_id,))
            db.execute(
                "UPDATE runs SET key = ?, pos = ?, benchmark = ?, fail_label = ?, metric = ? "
                "WHERE id = ?",
                (run.key, pos, run.benchmark, fail_label, run.metric, run_id),
            )
        if size > offset:
            offset, lines = self._read_lines(db, run_id, file, offset, lines, run, stats)
            stats.runs += 1
            head, tail = _probe(file, offset)
            db.execute(
                "UPDATE runs SET inode = ?, offset = ?, lines = ?, head = ?, tail = ? WHERE id = ?",
                (inode, offset, lines, head, tail, run_id),
            )
            self._summarize_run(db, run_id)
        elif row is None or inode != row[2]:
            db.execute("UPDATE runs SET inode = ? WHERE id = ?", (inode, run_id))
        db.execute("COMMIT")

    def _summarize_run(self, db: sqlite3.Connection, run_id: int) -> None:
        """Store the run's filter counts and its tasks' mean primary metric (read by the page
        and /api/facets without a pass over the episodes)."""
        facets = db.execute(
            "SELECT outcome, fail, grp, count(*) FROM episodes WHERE run = ? "
            "GROUP BY outcome, fail, grp",
            (run_id,),
        ).fetchall()
        values = db.execute(
            "SELECT task, avg(value) FROM episodes WHERE run = ? AND value IS NOT NULL "
            "GROUP BY task ORDER BY task",
            (run_id,),
        ).fetchall()
        db.execute(
            "UPDATE runs SET facets = ?, task_values = ? WHERE id = ?",
            (
                json.dumps(facets, ensure_ascii=False, separators=(",", ":")),
                json.dumps(dict(values), ensure_ascii=False, separators=(",", ":")),
                run_id,
            ),
        )

    def _read_lines(
        self,
        db: sqlite3.Connection,
        run_id: int,
        file: Path,
        offset: int,
        lines: int,
        run: IndexedRun,
        stats: UpdateStats,
    ) -> tuple[int, int]:
        fail_label, metric = run.failure_label or "", run.metric
        existing: dict[tuple[str, int], int] = {}
        if offset > 0:
            existing = {
                (task, trial): ep_id
                for ep_id, task, trial in db.execute(
                    "SELECT id, task, trial FROM episodes WHERE run = ?", (run_id,)
                )
            }
        next_id = self._meta_int(db, "next_id")
        orphans = 0
        rows: list[tuple[Any, ...]] = []
        texts: list[tuple[int, str]] = []
        labels: list[tuple[int, str, str]] = []
        replaced: list[int] = []
        pending: set[int] = set()
        problem: str | None = None
        # SQLite works in a second thread (it releases the GIL) while this one parses
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="todeval-index")
        batches: list[Future[None]] = []
        fts = self.fts

        def write(
            rows: list[tuple[Any, ...]],
            texts: list[tuple[int, str]],
            labels: list[tuple[int, str, str]],
            replaced: list[int],
        ) -> None:
            if replaced:
                marks = ",".join("?" * len(replaced))
                db.execute(f"DELETE FROM episodes WHERE id IN ({marks})", replaced)
                db.execute(f"DELETE FROM labels WHERE ep IN ({marks})", replaced)
                if not fts:
                    db.execute(f"DELETE FROM search WHERE rowid IN ({marks})", replaced)
            db.executemany("INSERT INTO episodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            db.executemany("INSERT INTO search (rowid, text) VALUES (?, ?)", texts)
            db.executemany("INSERT INTO labels VALUES (?, ?, ?)", labels)

        def flush() -> None:
            if len(batches) >= 2:  # at most two batches queued: memory stays bounded
                batches[-2].result()
            batches.append(writer.submit(write, rows[:], texts[:], labels[:], replaced[:]))
            rows.clear()
            texts.clear()
            labels.clear()
            replaced.clear()
            pending.clear()

        with file.open("rb") as fh:
            fh.seek(offset)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break  # a torn last line: read it when it is complete
                start, offset, lines = offset, offset + len(raw), lines + 1
                stats.lines += 1
                stats.bytes += len(raw)
                if not raw.strip():
                    continue
                try:
                    line = read_line(raw)
                except (ValidationError, ValueError):
                    problem = problem or f"{file}: line {lines} is not a valid episode record"
                    continue
                key = (line.task_id, line.trial)
                old = existing.get(key)
                if old is not None and old in pending:  # an earlier line of this batch
                    rows[:] = [r for r in rows if r[0] != old]
                    texts[:] = [t for t in texts if t[0] != old]
                    labels[:] = [x for x in labels if x[0] != old]
                elif old is not None:
                    replaced.append(old)
                    orphans += 1
                ep_id = next_id
                pending.add(ep_id)
                next_id += 1
                existing[key] = ep_id
                fail = line.labels.get(fail_label, "") if fail_label else ""
                value = line.metrics.get(metric) if line.outcome.counts_in_metrics else None
                rows.append(
                    (
                        ep_id,
                        run_id,
                        line.task_id,
                        line.trial,
                        line.episode_id,
                        line.outcome.value,
                        line.group,
                        fail,
                        json.dumps(line.labels, ensure_ascii=False) if line.labels else "{}",
                        line.turns,
                        start,
                        len(raw),
                        value,
                    )
                )
                text = search_text(line, raw)
                if fts:  # (a LIKE search would find its typed text inside the hashes)
                    words = [
                        facet_word("r", str(run_id)),
                        facet_word("o", line.outcome.value),
                        facet_word("g", line.group),
                        facet_word("f", fail),
                        *(facet_word("l", f"{k}\0{v}") for k, v in line.labels.items()),
                    ]
                    text += "\n" + " ".join(words)
                texts.append((ep_id, text))
                labels += [(ep_id, k, v) for k, v in line.labels.items()]
                if len(rows) >= _BATCH:
                    flush()
        flush()
        writer.shutdown(wait=True)
        for batch in batches:
            batch.result()  # raise what the writer raised
        self._set_meta(db, "next_id", next_id)
        if orphans and fts:
            self._set_meta(db, "orphans", self._meta_int(db, "orphans") + orphans)
        if problem:
            db.execute("UPDATE runs SET problem = ? WHERE id = ?", (problem, run_id))
        return offset, lines

    # --- reading ----------------------------------------------------------------------------

    def problems(self) -> list[str]:
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT problem FROM runs WHERE problem IS NOT NULL")]

    def _run_facets(self) -> list[tuple[str, list[list[Any]]]]:
        with self._db() as db:
            rows = db.execute("SELECT key, facets FROM runs ORDER BY pos").fetchall()
        return [(key, json.loads(facets)) for key, facets in rows]

    def counts(self) -> dict[str, int]:
        """Indexed episodes per run key."""
        return {key: sum(n for *_, n in facets) for key, facets in self._run_facets()}

    def facets(self) -> dict[str, Any]:
        """Counts for the filters: total, per run, outcome, failure class and group (summed
        from the runs' stored counts)."""
        per: dict[str, dict[str, int]] = {"outcome": {}, "fc": {}, "group": {}}
        runs: dict[str, int] = {}
        for key, facets in self._run_facets():
            runs[key] = 0
            for outcome, fail, grp, n in facets:
                runs[key] += n
                for name, value in (("outcome", outcome), ("fc", fail), ("group", grp)):
                    per[name][value] = per[name].get(value, 0) + n
        per["fc"].pop("", None)
        return {"total": sum(runs.values()), "run": runs, **per}

    def task_values(self) -> dict[str, TaskValues]:
        """Per run key, each task's mean of the run's primary metric (episodes that count in
        metrics, the last line per task and trial), as the static report computes them."""
        columns: dict[str, int] = {}  # every task id's column, shared by every run
        out: dict[str, TaskValues] = {}
        with self._db() as db:
            for key, values in db.execute("SELECT key, task_values FROM runs ORDER BY pos"):
                out[key] = TaskValues(columns, json.loads(values))
        return out

    def cached_page(self, key: str) -> tuple[bytes, bytes] | None:
        """The page and facets stored under ``key`` by :meth:`store_page`, if any."""
        with self._db() as db:
            row = db.execute("SELECT page, facets FROM pages WHERE key = ?", (key,)).fetchone()
        return (bytes(row[0]), bytes(row[1])) if row else None

    def store_page(self, key: str, page: bytes, facets: bytes) -> None:
        """Keep one built page (the last): a restart over unchanged runs serves it at once."""
        with self._db() as db:
            db.execute("BEGIN")
            db.execute("DELETE FROM pages")
            db.execute("INSERT INTO pages VALUES (?, ?, ?)", (key, page, facets))
            db.execute("COMMIT")

    def _prefix(self, db: sqlite3.Connection, word: str) -> str:
        """``word`` as a prefix query: the words of the index it starts, joined by OR, when
        there are few (FTS5 merges a prefix's whole posting list before anything else, while
        an OR of words is read only as far as the other words need: at a million episodes
        ``wrong table*`` takes 0.30 s, ``wrong (table OR tables)`` 0.04 s); else
        ``"word"*``."""
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, search, row)"
        )
        words = [
            r[0]
            for r in db.execute(
                "SELECT term FROM temp.vocab WHERE term >= ? AND term < ? LIMIT ?",
                (word, word + "\U0010ffff", _PREFIX_WORDS + 1),
            )
        ]
        if not words or len(words) > _PREFIX_WORDS:
            return _quote(word) + "*"
        return "(" + " OR ".join(_quote(w) for w in words) + ")"

    def _facet_words(self, q: EpisodeQuery, db: sqlite3.Connection) -> list[str]:
        """The hidden words (:func:`facet_word`) of the filters of ``q`` but the search."""
        words: list[str] = []
        if q.run:
            found = db.execute("SELECT id FROM runs WHERE key = ?", (q.run,)).fetchone()
            words.append(facet_word("r", str(found[0]) if found else "none"))
        for kind, value in (("o", q.outcome), ("f", q.fc), ("g", q.group)):
            if value:
                words.append(facet_word(kind, value))
        if q.label:  # split as the label filter's clause splits it
            name, _, value = q.label.partition(":")
            words.append(facet_word("l", f"{name}\0{value}"))
        return words

    def _where(self, q: EpisodeQuery, db: sqlite3.Connection) -> tuple[str, list[Any], list[str]]:
        clauses: list[str] = []
        args: list[Any] = []
        for value, clause in (
            (q.run, "r.key = ?"),
            (q.outcome, "e.outcome = ?"),
            (q.fc, "e.fail = ?"),
            (q.group, "e.grp = ?"),
        ):
            if value:
                clauses.append(clause)
                args.append(value)
        searched = self.fts and bool(search_terms(q.q))  # the label is matched by its word
        if q.label and not searched:
            name, _, value = q.label.partition(":")
            clauses.append("e.id IN (SELECT ep FROM labels WHERE name = ? AND value = ?)")
            args += [name, value]
        terms: list[str] = []
        text = q.q.strip()
        if text:
            terms = search_terms(text) if self.fts else [text]
            if self.fts and terms:
                clauses.append("e.id IN (SELECT rowid FROM search WHERE search MATCH ?)")
                # the last word by prefix (as typed), the others whole, and the other
                # filters' hidden words (the same rows as their clauses above)
                quoted = [_quote(t) for t in terms]
                facets = [_quote(w) for w in self._facet_words(q, db)]
                args.append(" AND ".join([*quoted[:-1], self._prefix(db, terms[-1]), *facets]))
            else:
                terms = [text]
                clauses.append("e.id IN (SELECT rowid FROM search WHERE text LIKE ? ESCAPE '\\')")
                escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                args.append(f"%{escaped}%")
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        return where, args, terms

    def query(self, q: EpisodeQuery) -> dict[str, Any]:
        """``{total, offset, terms, rows, next}``: one page of list rows matching the filters,
        failures first (every episode that did not succeed, across the runs), then
        successes; each in the runs' order and each run's file order. ``next`` (searches and
        label filters; else null) is the cursor to pass as ``after`` for the page that
        follows.

        Filters on run, outcome, failure class and group are counted from the runs' stored
        counts and paged run by run (each run's rows come from its own index range); a search
        or a label filter is counted in SQL (a search alone, from the search table when no
        removed row lingers in it) and paged by walking the runs in order when it matches
        many rows, by sorting the matches when it matches few."""
        with self._db() as db:
            if not q.q.strip() and not q.label:
                return self._page_by_runs(db, q)
            where, args, terms = self._where(q, db)
            base = "FROM episodes e JOIN runs r ON r.id = e.run" + where
            # a search (with any filters: their hidden words are in the match) is counted
            # from the postings, unless removed rows linger in them
            counted = self.fts and bool(terms) and self._meta_int(db, "orphans") == 0
            match = args[-1] if counted else ""
            if counted:
                total = db.execute(
                    "SELECT count(*) FROM search WHERE search MATCH ?", (match,)
                ).fetchone()[0]
            else:
                total = db.execute(f"SELECT count(*) {base}", args).fetchone()[0]
            rows: list[tuple[Any, ...]] = []
            cursor = q.after.split(":") if q.after else None
            if total > q.offset:
                # many matches: walk the runs in order, stopping once the page is full
                walk = "FROM runs r CROSS JOIN episodes e ON e.run = r.id" + where
                source = walk if total > _FEW_MATCHES else base
                joiner = " AND " if where else " WHERE "
                page = f"SELECT {_LIST_COLUMNS}{_CURSOR_COLUMNS} {source}{joiner}e.outcome {{}} ? "
                page += "{}ORDER BY r.pos, e.offset LIMIT ? OFFSET ?"

                def after(phase: str) -> tuple[str, list[int]]:
                    """Past the cursor's row, in its phase: earlier runs are skipped whole."""
                    if cursor is None or cursor[0] != phase:
                        return "", []
                    pos, offset = int(cursor[1]), int(cursor[2])
                    return "AND r.pos >= ? AND (r.pos > ? OR e.offset > ?) ", [pos, pos, offset]

                # an outcome filter lists one phase only: its rows are all failures, or all
                # successes (the other phase's walk would read every match for nothing)
                if q.outcome != _SUCCESS and (cursor is None or cursor[0] == "f"):
                    clause, bounds = after("f")
                    skip = 0 if cursor else q.offset
                    rows = db.execute(
                        page.format("!=", clause), [*args, _SUCCESS, *bounds, q.limit, skip]
                    ).fetchall()
                # past the failures: how many there are, then successes
                if len(rows) < q.limit and q.outcome in ("", _SUCCESS):
                    if cursor is not None:
                        failed = q.offset  # a cursor says where: nothing to skip
                    elif q.outcome == _SUCCESS:
                        failed = 0
                    elif rows or q.offset == 0:
                        failed = q.offset + len(rows)
                    elif counted:
                        failed = db.execute(
                            "SELECT count(*) FROM search WHERE search MATCH ?",
                            (f"({match}) NOT {_quote(facet_word('o', _SUCCESS))}",),
                        ).fetchone()[0]
                    else:
                        failed = db.execute(
                            f"SELECT count(*) {base}{joiner}e.outcome != ?", [*args, _SUCCESS]
                        ).fetchone()[0]
                    clause, bounds = after("s")
                    rows += db.execute(
                        page.format("=", clause),
                        [*args, _SUCCESS, *bounds, q.limit - len(rows), max(0, q.offset - failed)],
                    ).fetchall()
        found = self._rows(total, q.offset, terms, [row[:-2] for row in rows])
        if rows:
            last = rows[-1]
            found["next"] = f"{'s' if last[2] == _SUCCESS else 'f'}:{last[-2]}:{last[-1]}"
        return found

    def _page_by_runs(self, db: sqlite3.Connection, q: EpisodeQuery) -> dict[str, Any]:
        """A page under filters the runs' stored counts can count (run, outcome, failure
        class, group): each run's count of failures and of successes is known, so only the
        runs the page spans are read (the failures of every run, then the successes)."""
        per_run: list[tuple[int, int, int]] = []  # (run id, failures, successes) in order
        for run_id, key, facets in db.execute("SELECT id, key, facets FROM runs ORDER BY pos"):
            if q.run and key != q.run:
                continue
            counts = [0, 0]
            for outcome, fail, grp, count in json.loads(facets):
                if (
                    (not q.outcome or outcome == q.outcome)
                    and (not q.fc or fail == q.fc)
                    and (not q.group or grp == q.group)
                ):
                    counts[outcome == _SUCCESS] += count
            if counts[0] or counts[1]:
                per_run.append((run_id, counts[0], counts[1]))
        total = sum(f + p for _, f, p in per_run)
        clauses, args = ["e.run = ?", "e.outcome {} ?"], []
        for value, clause in (
            (q.outcome, "e.outcome = ?"),
            (q.fc, "e.fail = ?"),
            (q.group, "e.grp = ?"),
        ):
            if value:
                clauses.append(clause)
                args.append(value)
        sql = (
            f"SELECT {_LIST_COLUMNS} FROM episodes e JOIN runs r ON r.id = e.run "
            f"WHERE {' AND '.join(clauses)} ORDER BY e.offset LIMIT ? OFFSET ?"
        )
        rows: list[tuple[Any, ...]] = []
        skip, want = q.offset, q.limit
        for phase, compare in ((1, "!="), (2, "=")):
            for entry in per_run:
                run_id, n = entry[0], entry[phase]
                if want <= 0:
                    break
                if skip >= n:
                    skip -= n
                    continue
                got = db.execute(
                    sql.format(compare), [run_id, _SUCCESS, *args, want, skip]
                ).fetchall()
                rows += got
                want -= len(got)
                skip = 0
        return self._rows(total, q.offset, [], rows)

    def neighbours(self, q: EpisodeQuery, run: str, episode_id: str) -> dict[str, str | None]:
        """``{prev, next}``: the keys (``run/episode id``) of the failures just before and
        after the episode in the list's order under the filters ``q`` (failures are listed
        in the runs' order and each run's file order), ``None`` where there is none."""
        out: dict[str, str | None] = {"prev": None, "next": None}
        with self._db() as db:
            at = db.execute(
                "SELECT r.pos, e.offset FROM episodes e JOIN runs r ON r.id = e.run "
                "WHERE r.key = ? AND e.episode_id = ?",
                (run, episode_id),
            ).fetchone()
            if at is None:
                return out
            pos, offset = at
            where, args, _ = self._where(q, db)
            joiner = " AND " if where else " WHERE "
            walk = f"FROM runs r CROSS JOIN episodes e ON e.run = r.id{where}{joiner}"
            for name, compare, order in (("prev", "<", " DESC"), ("next", ">", "")):
                found = db.execute(
                    f"SELECT r.key, e.episode_id {walk}e.outcome != ? AND r.pos {compare}= ? "
                    f"AND (r.pos {compare} ? OR e.offset {compare} ?) "
                    f"ORDER BY r.pos{order}, e.offset{order} LIMIT 1",
                    [*args, _SUCCESS, pos, pos, offset],
                ).fetchone()
                out[name] = f"{found[0]}/{found[1]}" if found else None
        return out

    @staticmethod
    def _rows(
        total: int, offset: int, terms: list[str], rows: list[tuple[Any, ...]]
    ) -> dict[str, Any]:
        return {
            "total": total,
            "offset": offset,
            "next": None,
            "terms": terms,
            "rows": [
                {
                    "run": run,
                    "id": ep,
                    "outcome": outcome,
                    "group": grp,
                    "labels": json.loads(labels),
                    "turns": turns,
                }
                for run, ep, outcome, grp, labels, turns in rows
            ],
        }

    def benchmarks(self) -> list[str]:
        """The benchmarks of the indexed runs (sorted)."""
        with self._db() as db:
            rows = db.execute("SELECT DISTINCT benchmark FROM runs WHERE benchmark != ''")
            return sorted(str(row[0]) for row in rows)

    def record(self, run: str, episode_id: str) -> EpisodeRecord | None:
        """The full record of one episode, read from its run's file (None: not indexed, or
        the file changed under the index -- update and ask again)."""
        with self._db() as db:
            found_run = db.execute("SELECT id, path FROM runs WHERE key = ?", (run,)).fetchone()
            if found_run is None:
                return None
            run_id, stored = found_run
            found = db.execute(
                "SELECT offset, length FROM episodes WHERE run = ? AND episode_id = ?",
                (run_id, episode_id),
            ).fetchone()
        if found is None:
            return None
        offset, length = found
        try:
            with (self._file(stored) / EPISODES).open("rb") as fh:
                fh.seek(offset)
                raw = fh.read(length)
            record = EpisodeRecord.model_validate_json(raw)
        except (OSError, ValidationError, ValueError):
            return None
        return record if record.episode_id == episode_id else None
