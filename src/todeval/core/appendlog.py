"""Append-only JSONL files that survive a torn tail.

A process killed in the middle of an append leaves a last line without its newline. Readers
skip such a line; but the next append would then be written right after the fragment, gluing
two records into one line that no reader accepts. :func:`repair_tail` runs before a file is
opened for appending: a fragment that is a whole JSON value (only the newline was lost) gets
its newline back; any other fragment is moved, byte for byte, to a sibling file
``<name>.torn`` (one fragment per line, appended) and cut from the log. Nothing is dropped
silently: the caller says where the fragment went.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

_CHUNK = 1 << 16


def torn_path(path: Path) -> Path:
    """Where fragments cut from ``path`` are kept."""
    return path.with_name(path.name + ".torn")


def _tail_start(fh: int, size: int) -> int:
    """The offset just after the last newline of the file open as ``fh`` (0 when none)."""
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fh, end - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def repair_tail(path: Path) -> Path | None:
    """Make ``path`` end on a whole line before the next append.

    Returns the ``.torn`` file a fragment was moved to, or ``None`` when nothing was moved (no
    file, an empty file, a file ending with a newline, or a last line that only lacked its
    newline, which is restored). Raises ``OSError`` when the file cannot be repaired."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    if size == 0:
        return None
    fd = os.open(path, os.O_RDWR)
    try:
        if os.pread(fd, 1, size - 1) == b"\n":
            return None
        start = _tail_start(fd, size)
        fragment = os.pread(fd, size - start, start)
        if _whole_json(fragment):
            os.pwrite(fd, b"\n", size)
            os.fsync(fd)
            return None
        kept = torn_path(path)
        with kept.open("ab") as out:
            out.write(fragment + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.ftruncate(fd, start)
        os.fsync(fd)
        return kept
    finally:
        os.close(fd)


def _whole_json(fragment: bytes) -> bool:
    try:
        json.loads(fragment)
    except ValueError:  # UnicodeDecodeError is a ValueError too
        return False
    return fragment.strip().startswith(b"{")


__all__ = ["repair_tail", "torn_path"]
