"""The episode index of ``todeval view``: one SQLite file over every run under a directory.

``todeval view`` serves any number of runs without holding their episodes in memory: the page
lists episodes from this index and fetches one transcript at a time. The index (default
``RUNS_DIR/.todeval-view.sqlite``) holds, per episode, its list row (id, outcome, group,
labels, turns), where its line is in ``episodes.jsonl`` (byte offset and length; the
transcript itself is read from the run's file on demand) and its search text (an FTS5 table
when SQLite has FTS5, else a plain table searched with ``LIKE``).

It is built incrementally. Per run directory it records how far ``episodes.jsonl`` was read
(byte offset, line count) and the file's identity (inode, and digests of its first bytes and
of the bytes before the offset). On each update only the lines appended since are read; a
file that was replaced, shrunk or rewritten is indexed again from the start. A torn last line
(a run killed mid-write) is left for the next update. An episode that appears again (re-run
after an infrastructure error) replaces its earlier row, as when the run is read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
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
INDEX_SCHEMA = "1"
_PROBE = 4096  # bytes hashed at the start of the file and before the offset
_BATCH = 250  # lines per insert batch (written while the next is parsed)


class IndexedRun(BaseModel):
    """A run the index should cover: its current key, directory and benchmark."""

    key: str
    path: Path
    benchmark: str
    failure_label: str | None = None


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


def search_text(line: _Line, raw: bytes) -> str:
    """Everything the search matches: ids, group, outcome, reason, labels and every event's
    kind and data (keys and values) -- the fields a static report's search looks at."""
    parts = [line.episode_id, line.task_id, line.group, line.outcome.value, line.reason]
    for k, v in line.labels.items():
        parts += (k, v)
    parts.append(events_text(raw))
    return "\n".join(parts)


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def search_terms(q: str) -> list[str]:
    """The words of a search, split as the index's tokenizer splits text (letters and digits;
    FTS5 matches each as a word prefix)."""
    return _WORD.findall(q.lower())


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
    inode INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    head TEXT NOT NULL DEFAULT '',
    tail TEXT NOT NULL DEFAULT '',
    problem TEXT
);
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
    UNIQUE (run, task, trial)
);
CREATE INDEX episodes_order ON episodes (run, offset);
CREATE INDEX episodes_id ON episodes (run, episode_id);
CREATE TABLE labels (ep INTEGER NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX labels_value ON labels (name, value);
CREATE INDEX labels_ep ON labels (ep);
"""


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
                db.executescript(_SCHEMA)
                if self._want_fts:
                    db.execute(
                        "CREATE VIRTUAL TABLE search USING fts5(text, detail=none, columnsize=0)"
                    )
                else:
                    db.execute("CREATE TABLE search (rowid INTEGER PRIMARY KEY, text TEXT)")
                db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("schema", INDEX_SCHEMA), ("fts", "1" if self._want_fts else "0")],
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

    def update(self, runs: Sequence[IndexedRun]) -> UpdateStats:
        """Bring the index up to date with ``runs`` (in display order); others are dropped."""
        import time

        t0 = time.perf_counter()
        stats = UpdateStats()
        with self._db() as db:
            known = {
                row[1]: row
                for row in db.execute(
                    "SELECT id, path, inode, offset, lines, head, tail, fail_label FROM runs"
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
                self._update_run(db, stored, pos, run, known.get(stored), stats)
        stats.seconds = time.perf_counter() - t0
        return stats

    def _drop_episodes(self, db: sqlite3.Connection, run_id: int) -> None:
        db.execute(
            "DELETE FROM labels WHERE ep IN (SELECT id FROM episodes WHERE run = ?)", (run_id,)
        )
        db.execute(
            "DELETE FROM search WHERE rowid IN (SELECT id FROM episodes WHERE run = ?)", (run_id,)
        )
        db.execute("DELETE FROM episodes WHERE run = ?", (run_id,))

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
                "INSERT INTO runs (path, key, pos, benchmark, fail_label) VALUES (?, ?, ?, ?, ?)",
                (stored, run.key, pos, run.benchmark, fail_label),
            )
            run_id, offset, lines = int(cur.lastrowid or 0), 0, 0
        else:
            run_id, _, old_inode, offset, lines, head, tail, old_fail = row
            rewritten = (
                old_inode != inode
                or size < offset
                or old_fail != fail_label
                or (offset > 0 and _probe(file, offset) != (head, tail))
            )
            if rewritten and offset > 0:
                self._drop_episodes(db, run_id)
                stats.reindexed.append(run.key)
            if rewritten:
                offset, lines = 0, 0
                db.execute("UPDATE runs SET problem = NULL WHERE id = ?", (run_id,))
            db.execute(
                "UPDATE runs SET key = ?, pos = ?, benchmark = ?, fail_label = ? WHERE id = ?",
                (run.key, pos, run.benchmark, fail_label, run_id),
            )
        if size > offset:
            offset, lines = self._read_lines(db, run_id, file, offset, lines, fail_label, stats)
            stats.runs += 1
            head, tail = _probe(file, offset)
            db.execute(
                "UPDATE runs SET inode = ?, offset = ?, lines = ?, head = ?, tail = ? WHERE id = ?",
                (inode, offset, lines, head, tail, run_id),
            )
        elif row is None or inode != row[2]:
            db.execute("UPDATE runs SET inode = ? WHERE id = ?", (inode, run_id))
        db.execute("COMMIT")

    def _read_lines(
        self,
        db: sqlite3.Connection,
        run_id: int,
        file: Path,
        offset: int,
        lines: int,
        fail_label: str,
        stats: UpdateStats,
    ) -> tuple[int, int]:
        existing: dict[tuple[str, int], int] = {}
        if offset > 0:
            existing = {
                (task, trial): ep_id
                for ep_id, task, trial in db.execute(
                    "SELECT id, task, trial FROM episodes WHERE run = ?", (run_id,)
                )
            }
        next_id = int(db.execute("SELECT coalesce(max(id), 0) + 1 FROM episodes").fetchone()[0])
        rows: list[tuple[Any, ...]] = []
        texts: list[tuple[int, str]] = []
        labels: list[tuple[int, str, str]] = []
        replaced: list[int] = []
        pending: set[int] = set()
        problem: str | None = None
        # SQLite works in a second thread (it releases the GIL) while this one parses
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="todeval-index")
        batches: list[Future[None]] = []

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
                db.execute(f"DELETE FROM search WHERE rowid IN ({marks})", replaced)
            db.executemany("INSERT INTO episodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            db.executemany("INSERT INTO search (rowid, text) VALUES (?, ?)", texts)
            db.executemany("INSERT INTO labels VALUES (?, ?, ?)", labels)

        def flush() -> None:
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
                    line = _Line.model_validate_json(raw)
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
                ep_id = next_id
                pending.add(ep_id)
                next_id += 1
                existing[key] = ep_id
                fail = line.labels.get(fail_label, "") if fail_label else ""
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
                        json.dumps(line.labels, ensure_ascii=False),
                        line.turns,
                        start,
                        len(raw),
                    )
                )
                texts.append((ep_id, search_text(line, raw)))
                labels += [(ep_id, k, v) for k, v in line.labels.items()]
                if len(rows) >= _BATCH:
                    flush()
        flush()
        writer.shutdown(wait=True)
        for batch in batches:
            batch.result()  # raise what the writer raised
        if problem:
            db.execute("UPDATE runs SET problem = ? WHERE id = ?", (problem, run_id))
        return offset, lines

    # --- reading ----------------------------------------------------------------------------

    def problems(self) -> list[str]:
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT problem FROM runs WHERE problem IS NOT NULL")]

    def counts(self) -> dict[str, int]:
        """Indexed episodes per run key."""
        with self._db() as db:
            return dict(
                db.execute(
                    "SELECT r.key, count(e.id) FROM runs r LEFT JOIN episodes e ON e.run = r.id "
                    "GROUP BY r.id"
                ).fetchall()
            )

    def facets(self) -> dict[str, Any]:
        """Counts for the filters: total, per run, outcome, failure class and group."""
        out: dict[str, Any] = {}
        with self._db() as db:
            out["total"] = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
            out["run"] = self.counts()
            for name, col in (("outcome", "outcome"), ("fc", "fail"), ("group", "grp")):
                out[name] = dict(
                    db.execute(f"SELECT {col}, count(*) FROM episodes GROUP BY {col}").fetchall()
                )
            out["fc"].pop("", None)
        return out

    def _where(self, q: EpisodeQuery) -> tuple[str, list[Any], list[str]]:
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
        if q.label:
            name, _, value = q.label.partition(":")
            clauses.append("e.id IN (SELECT ep FROM labels WHERE name = ? AND value = ?)")
            args += [name, value]
        terms: list[str] = []
        text = q.q.strip()
        if text:
            terms = search_terms(text) if self.fts else [text]
            if self.fts and terms:
                clauses.append("e.id IN (SELECT rowid FROM search WHERE search MATCH ?)")
                args.append(" AND ".join('"' + t.replace('"', '""') + '"*' for t in terms))
            else:
                terms = [text]
                clauses.append("e.id IN (SELECT rowid FROM search WHERE text LIKE ? ESCAPE '\\')")
                escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                args.append(f"%{escaped}%")
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        return where, args, terms

    def query(self, q: EpisodeQuery) -> dict[str, Any]:
        """``{total, offset, terms, rows}``: one page of list rows matching the filters."""
        where, args, terms = self._where(q)
        base = "FROM episodes e JOIN runs r ON r.id = e.run" + where
        with self._db() as db:
            total = db.execute(f"SELECT count(*) {base}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT r.key, e.episode_id, e.outcome, e.grp, e.labels, e.turns {base} "
                "ORDER BY r.pos, e.offset LIMIT ? OFFSET ?",
                [*args, q.limit, q.offset],
            ).fetchall()
        return {
            "total": total,
            "offset": q.offset,
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

    def record(self, run: str, episode_id: str) -> EpisodeRecord | None:
        """The full record of one episode, read from its run's file (None: not indexed, or
        the file changed under the index -- update and ask again)."""
        with self._db() as db:
            found = db.execute(
                "SELECT r.path, e.offset, e.length FROM episodes e JOIN runs r ON r.id = e.run "
                "WHERE r.key = ? AND e.episode_id = ?",
                (run, episode_id),
            ).fetchone()
        if found is None:
            return None
        stored, offset, length = found
        try:
            with (self._file(stored) / EPISODES).open("rb") as fh:
                fh.seek(offset)
                raw = fh.read(length)
            record = EpisodeRecord.model_validate_json(raw)
        except (OSError, ValidationError, ValueError):
            return None
        return record if record.episode_id == episode_id else None
