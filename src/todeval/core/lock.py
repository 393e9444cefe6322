"""One writer at a time: an advisory lock on a file beside what is written.

A run directory and an annotation answer file each have a single writer. :func:`hold` takes an
exclusive ``flock`` on a lock file (``.todeval.lock`` in a run directory, ``.<answers>.lock``
beside an answer file) for as long as the writer lives and writes who holds it there (pid,
host, start time; never the command line, which may hold a key). A second writer is refused at
once (exit 4) with those facts. The kernel drops the lock when its holder dies, however it dies
(``kill -9`` included), so a lock left by a killed process never blocks the resume: only a
living holder does.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from todeval.errors import RefusedError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock, as before
    fcntl = None  # type: ignore[assignment]

RUN_LOCK = ".todeval.lock"
"""The lock file of a run directory."""


def lock_path_for(file: Path) -> Path:
    """The lock file that guards ``file`` (a sibling: ``.<name>.lock``)."""
    return file.with_name(f".{file.name}.lock")


def holder_of(lock: Path) -> str:
    """Who holds ``lock``, as its holder wrote it ("pid 12 on h since T")."""
    try:
        facts = json.loads(lock.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another process"
    if not isinstance(facts, dict):
        return "another process"
    who = f"pid {facts.get('pid', '?')} on {facts.get('host', '?')}"
    since = facts.get("started_at")
    return who + (f" since {since}" if since else "")


@contextlib.contextmanager
def hold(lock: Path, what: str) -> Iterator[None]:
    """Hold ``lock`` exclusively while the block runs; :class:`RefusedError` naming the holder
    when a living process holds it (``what`` says what is guarded: "run directory runs/a")."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        try:  # a read-only lock file still takes a lock (flock needs no write access)
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            # No lock file and no way to make one: this process cannot write there either, and
            # the first write says so in its own words.
            yield
            return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RefusedError(
                f"{what} is in use by {holder_of(lock)}; wait for it to finish, stop it, or "
                "use another path"
            ) from None
        facts = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(facts).encode("utf-8"), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # nobody holds it now
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


__all__ = ["RUN_LOCK", "hold", "holder_of", "lock_path_for"]
