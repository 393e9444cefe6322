"""The run directory: ``manifest.json``, ``episodes.jsonl`` and ``summary.json``.

Episodes are appended one line at a time and flushed to disk when each episode ends, so a
killed run loses at most the episodes in flight. A torn last line (a kill mid-write) is ignored
on reading and, before the next append, moved to ``episodes.jsonl.torn`` (never dropped). The
manifest and the summary are replaced whole (a temporary file renamed over them). Every line
and file is redacted of API keys. The driver is the only writer, and holds the directory's lock
(``.todeval.lock``, :mod:`todeval.core.lock`) for the life of the run, so a second run into the
same directory is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json

from todeval.core import safejson
from todeval.core.appendlog import repair_tail
from todeval.core.files import write_atomic
from todeval.core.records import EpisodeRecord, Manifest, Summary, contradictions
from todeval.core.redact import redact
from todeval.core.userfiles import check_regular, read_user_text
from todeval.errors import BadInputError

MANIFEST = "manifest.json"
EPISODES = "episodes.jsonl"
SUMMARY = "summary.json"


def cannot_write(path: Path, exc: OSError) -> BadInputError:
    """The one-line error for a run-directory file that cannot be written (a read-only
    directory, a full disk, a directory in the file's place)."""
    return BadInputError(
        f"cannot write {path} ({exc.strerror or exc}); finished episodes are kept: fix this "
        "and run the same command"
    )


def write_json_atomic(path: Path, model: BaseModel) -> None:
    """``manifest.json`` and ``summary.json``: whole or not at all (:func:`write_atomic`)."""
    try:
        write_atomic(path, model.model_dump_json(indent=2) + "\n")
    except OSError as exc:
        raise cannot_write(path, exc) from None


MAX_JSON_FILE_BYTES = 64 * 1024 * 1024
"""The largest manifest or summary read (64 MiB; a real one is a few kilobytes)."""


def _reason(exc: Exception) -> str:
    """A short cause: the JSON parser's message, or the first schema error's field."""
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        return f"{where}: {first['msg']}"
    return str(exc)[:200] or exc.__class__.__name__


def _why(exc: Exception) -> str:
    """`` (field: reason)`` for a record that is valid JSON but breaks the schema (e.g. a NaN
    metric), else nothing."""
    if not isinstance(exc, ValidationError):
        return ""
    first = exc.errors(include_url=False)[0]
    if first["type"] in ("json_invalid", "json_type"):
        return ""
    where = ".".join(str(p) for p in first["loc"]) or "record"
    return f" ({where}: {first['msg']})"


def _validate(line: bytes) -> EpisodeRecord:
    """One line as a record: parsed by pydantic-core, then validated (faster than
    ``model_validate_json``, whose event validators make it rebuild each event as an object)."""
    return EpisodeRecord.model_validate(from_json(line))


class _Key(BaseModel):
    task_id: str
    trial: int


_HEAD = re.compile(
    rb'\{"schema_version":\d+,"benchmark":"(?:[^"\\]|\\.)*","episode_id":"(?:[^"\\]|\\.)*",'
    rb'"task_id":"((?:[^"\\]|\\.)*)","trial":(-?\d+)[,}]'
)
"""The start of a line as the writer writes it (``model_dump_json``'s field order)."""


def line_key(line: bytes) -> tuple[str, int] | None:
    """An episode line's (task id, trial), read without validating the line; ``None`` when the
    line names none (it is not a valid record either).

    A line as todeval writes it starts with its key, read there (a line that repeats the name
    later -- JSON's last duplicate wins -- is caught when it is validated, see
    :meth:`RunDirectory.iter_episode_lines`); any other line is parsed for it."""
    head = _HEAD.match(line)
    if head is not None:
        raw = head.group(1)
        try:
            task = json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode("utf-8")
        except ValueError:
            return None  # not JSON's string, or not UTF-8: no record either
        return task, int(head.group(2))
    try:
        key = _Key.model_validate_json(line)
    except (ValidationError, ValueError):
        return None
    return key.task_id, key.trial


class RunDirectory:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def episodes_path(self) -> Path:
        return self.path / EPISODES

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def read_manifest(self) -> Manifest:
        text = read_user_text(
            self.manifest_path, what="manifest", folder=self.path, max_bytes=MAX_JSON_FILE_BYTES
        )
        try:
            return Manifest.model_validate(safejson.loads(text))
        except (ValidationError, ValueError) as exc:
            raise BadInputError(
                f"{self.manifest_path}: not a valid manifest ({_reason(exc)})"
            ) from None

    def has_episodes(self) -> bool:
        """Whether ``episodes.jsonl`` exists and is not empty (a directory in its place is a
        one-line error)."""
        path = self.episodes_path
        if path.is_dir():
            raise BadInputError(f"{path} is a directory, not an episodes file")
        try:
            return path.exists() and (not path.is_file() or path.stat().st_size > 0)
        except OSError:
            return True

    def make(self) -> None:
        """Create the directory (and its parents); the one-line error when it cannot be."""
        self._mkdir()

    def _mkdir(self) -> None:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise cannot_write(self.path, exc) from None

    def write_manifest(self, manifest: Manifest) -> None:
        self._mkdir()
        write_json_atomic(self.manifest_path, manifest)

    def read_summary(self) -> Summary | None:
        """The summary, or ``None`` when there is none or it cannot be used (it is rewritten
        from the episodes); a summary that is not a regular file inside the run is refused."""
        if not self.summary_path.exists() and not self.summary_path.is_symlink():
            return None
        text = read_user_text(
            self.summary_path, what="summary", folder=self.path, max_bytes=MAX_JSON_FILE_BYTES
        )
        try:
            return Summary.model_validate(safejson.loads(text))
        except (ValidationError, ValueError):
            return None

    def write_summary(self, summary: Summary) -> None:
        write_json_atomic(self.summary_path, summary)

    def iter_episodes(self, *, light: bool = False) -> Iterator[EpisodeRecord]:
        """Complete episode records, streamed; a torn last line is skipped.

        If an episode appears more than once (re-run after an infrastructure error), only its
        last line is yielded: a first pass notes where each key last appears (keys only, read
        without validating the line), the second validates every line once and yields those.
        ``light=True`` drops events and details, keeping memory small for summaries and resume
        bookkeeping.
        """
        for _, record in self.iter_episode_lines(light=light):
            yield record

    def iter_episode_lines(self, *, light: bool = False) -> Iterator[tuple[bytes, EpisodeRecord]]:
        """:meth:`iter_episodes` with each record's line as it is on disk (one validation per
        line in all: the first pass reads keys only, :func:`line_key`)."""
        last: dict[tuple[str, int], int] = {}
        read: dict[int, tuple[str, int]] = {}
        checked: dict[int, tuple[bytes, EpisodeRecord]] = {}
        opened = self._open_episodes()
        if opened is None:
            return
        with opened as fh:
            for number, line in enumerate(fh, start=1):
                if not line or line.isspace():  # (no copy of the line, unlike strip)
                    continue
                if line.endswith(b"\n"):
                    key = line_key(line)
                    if key is not None:
                        read[number] = key
                    last[key or ("", -number)] = number
                    continue
                try:  # an unterminated last line: torn, unless it is a whole record
                    record = _validate(line)
                except (ValidationError, ValueError):
                    continue
                checked[number] = (line, record)
                last[record.key] = number
        keep = set(last.values())
        for number, line, record in self._scan(light=light, checked=checked):
            if read.get(number, record.key) != record.key:
                raise BadInputError(
                    f"{self.episodes_path}: line {number} names its task_id or trial twice"
                )
            if number in keep:
                yield line, record

    def read_episodes(self, *, light: bool = False) -> list[EpisodeRecord]:
        """All complete episode records (see :meth:`iter_episodes`)."""
        return list(self.iter_episodes(light=light))

    def scan_episodes(self) -> Iterator[tuple[int, EpisodeRecord]]:
        """(line number, record) of every complete line, superseded ones included (light)."""
        for number, _, record in self._scan(light=True):
            yield number, record

    def _open_episodes(self) -> IO[bytes] | None:
        if not self.episodes_path.exists() and not self.episodes_path.is_symlink():
            return None
        if self.episodes_path.is_dir():
            raise BadInputError(f"{self.episodes_path} is a directory, not an episodes file")
        check_regular(self.episodes_path, what="episodes file", folder=self.path)
        try:
            return self.episodes_path.open("rb")
        except OSError as exc:
            raise BadInputError(
                f"{self.episodes_path}: cannot read ({exc.strerror or exc})"
            ) from None

    def _scan(
        self, *, light: bool, checked: dict[int, tuple[bytes, EpisodeRecord]] | None = None
    ) -> Iterator[tuple[int, bytes, EpisodeRecord]]:
        """(line number, line, record) of every complete line, each validated once
        (``checked``: lines already validated, by number, with the line as it was then)."""
        opened = self._open_episodes()
        if opened is None:
            return
        with opened as fh:
            for number, line in enumerate(fh, start=1):
                if not line or line.isspace():  # (no copy of the line, unlike strip)
                    continue
                seen = (checked or {}).get(number)
                record = seen[1] if seen is not None and seen[0] == line else None
                if record is None:
                    try:
                        record = _validate(line)
                    except (ValidationError, ValueError) as exc:
                        if not line.endswith(b"\n"):
                            continue  # torn last line from an interrupted write
                        raise BadInputError(
                            f"{self.episodes_path}: line {number} is not a valid episode "
                            f"record{_why(exc)}"
                        ) from None
                if light:
                    record.events = []
                    record.details = {}
                yield number, line, record

    def repair_tail(self) -> Path | None:
        """Make ``episodes.jsonl`` end on a whole line before the next append: a torn last
        line (a kill mid-write) is moved to ``episodes.jsonl.torn``, whose path is returned
        (:func:`todeval.core.appendlog.repair_tail`)."""
        return repair_tail(self.episodes_path)

    def open_appender(self) -> EpisodeWriter:
        """The episode log opened for appending, its torn tail repaired first (the writer's
        ``set_aside`` names the file a fragment was moved to)."""
        self._mkdir()
        try:
            set_aside = self.repair_tail()
            fh = self.episodes_path.open("a", encoding="utf-8")
        except OSError as exc:
            raise cannot_write(self.episodes_path, exc) from None
        writer = EpisodeWriter(fh, path=self.episodes_path)
        writer.set_aside = set_aside
        return writer


class EpisodeWriter:
    """Appends one JSON line per episode.

    Each line is flushed to the operating system at once, so killing the process never loses a
    finished episode. ``fsync`` (protection against a machine crash) runs at most once every
    ``fsync_interval_s`` and on close: a per-line fsync blocks the event loop for milliseconds.
    """

    def __init__(
        self, fh: IO[str], *, fsync_interval_s: float = 1.0, path: Path | None = None
    ) -> None:
        self._fh = fh
        self._path = path or Path(getattr(fh, "name", "episodes.jsonl"))
        self._interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self.set_aside: Path | None = None
        """Where a torn last line found on opening was moved (``None``: there was none)."""

    def append(self, record: EpisodeRecord) -> None:
        disagree = contradictions(record)
        if disagree:  # a benchmark's bug: refuse to write a record that contradicts itself
            raise ValueError(f"episode {record.episode_id} contradicts itself: {disagree[0]}")
        line = redact(record.model_dump_json())  # no API key a server echoed, ever
        json.loads(line)  # never write a line we could not read back
        try:
            self._fh.write(line + "\n")
            self._fh.flush()
            now = time.monotonic()
            if now - self._last_sync >= self._interval:
                os.fsync(self._fh.fileno())
                self._last_sync = now
        except OSError as exc:
            raise cannot_write(self._path, exc) from None

    def close(self) -> None:
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError:
            pass  # the append that failed already said why
        finally:
            with contextlib.suppress(OSError):
                self._fh.close()
