"""Reading a file a user handed us: bounded, regular, inside its folder, decoded with care.

Every failure is a :class:`~todeval.errors.BadInputError` (exit 3) naming the file and the
cause, never a traceback and never a silent fallback:

* a path that is not a regular file (a directory, a FIFO, a device such as ``/dev/zero``, a
  dangling symlink) is refused before it is opened;
* with ``folder``, a path whose real location (symlinks followed) leaves that folder is
  refused: a template named ``system.txt`` linking to ``/proc/self/environ`` is not read;
* more than ``max_bytes`` is refused (checked on the size and again while reading, so a file
  that grows or lies about its size cannot exhaust memory);
* text that is not UTF-8 is refused with the line and column of the first bad byte.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from todeval.errors import BadInputError

MAX_USER_FILE_BYTES = 256 * 1024 * 1024
"""The default bound on a file a user hands us (256 MiB)."""


def _real_inside(path: Path, folder: Path) -> bool:
    try:
        real = path.resolve(strict=True)
        root = folder.resolve(strict=True)
    except OSError:
        return False
    return real == root or root in real.parents


def check_regular(path: Path, *, what: str = "file", folder: Path | None = None) -> None:
    """Refuse ``path`` unless it is a regular file (inside ``folder``, symlinks followed)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise BadInputError(f"{path}: the {what} is a symlink to nothing") from None
        raise BadInputError(f"{path}: cannot read the {what} (no such file)") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise BadInputError(f"{path}: the {what} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise BadInputError(f"{path}: the {what} is not a regular file (a device, pipe or socket)")
    if folder is not None and not _real_inside(path, folder):
        raise BadInputError(f"{path}: the {what} is a link that leaves {folder}; copy the file in")


def read_user_bytes(
    path: str | Path,
    *,
    what: str = "file",
    folder: str | Path | None = None,
    max_bytes: int = MAX_USER_FILE_BYTES,
) -> bytes:
    """The bytes of ``path`` after the checks of this module."""
    path = Path(path)
    check_regular(path, what=what, folder=Path(folder) if folder is not None else None)
    try:
        if path.stat().st_size > max_bytes:
            raise BadInputError(f"{path}: the {what} is larger than {max_bytes:,} bytes")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise BadInputError(f"{path}: the {what} is larger than {max_bytes:,} bytes")
    return data


def decode_utf8(data: bytes, path: str | Path, *, what: str = "file") -> str:
    """``data`` as UTF-8 text (a leading BOM dropped); the line and column of a bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise BadInputError(
            f"{path}:{line}:{column}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x})"
        ) from None


def read_user_text(
    path: str | Path,
    *,
    what: str = "file",
    folder: str | Path | None = None,
    max_bytes: int = MAX_USER_FILE_BYTES,
) -> str:
    """The UTF-8 text of ``path`` after the checks of this module."""
    data = read_user_bytes(path, what=what, folder=folder, max_bytes=max_bytes)
    return decode_utf8(data, path, what=what)


MAX_SQLITE_ROWS = 1_000_000
"""The bound on the rows read from one SQLite table a user hands us."""
_SQLITE_STEPS = 200_000_000
"""SQLite virtual-machine steps one read may take before it is stopped (no hang)."""


def read_user_sqlite_rows(
    path: str | Path,
    table: str,
    *,
    what: str = "file",
    folder: str | Path | None = None,
    max_bytes: int = MAX_USER_FILE_BYTES,
    max_rows: int = MAX_SQLITE_ROWS,
) -> list[dict[str, object]]:
    """Every row of ``table`` (a real table, not a view) of the SQLite file ``path``, after the
    checks of this module: the file is read once (bounded) and opened from memory, so no journal
    or lock file is touched; at most ``max_rows`` rows; a read that runs too long is stopped."""
    import sqlite3

    path = Path(path)
    data = read_user_bytes(path, what=what, folder=folder, max_bytes=max_bytes)
    steps = 0

    def progress() -> int:
        nonlocal steps
        steps += 1000
        return 1 if steps > _SQLITE_STEPS else 0

    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(data)
        conn.set_progress_handler(progress, 1000)
        conn.row_factory = sqlite3.Row
        kind = conn.execute("SELECT type FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        if kind is None or kind[0] != "table":
            found = "a view" if kind is not None else "no such table"
            raise BadInputError(f"{path}: the {what} has no table {table!r} ({found})")
        quoted = table.replace('"', '""')  # quoted, never interpolated raw
        cursor = conn.execute(f'SELECT * FROM "{quoted}"')
        rows = cursor.fetchmany(max_rows + 1)
        if len(rows) > max_rows:
            raise BadInputError(f"{path}: the {what}'s table {table!r} has over {max_rows:,} rows")
        return [dict(r) for r in rows]
    except sqlite3.Error as exc:
        cause = "it took too long" if steps > _SQLITE_STEPS else str(exc).splitlines()[0]
        raise BadInputError(f"{path}: the {what} is not a readable SQLite file ({cause})") from None
    finally:
        conn.close()


__all__ = [
    "MAX_SQLITE_ROWS",
    "MAX_USER_FILE_BYTES",
    "check_regular",
    "decode_utf8",
    "read_user_bytes",
    "read_user_sqlite_rows",
    "read_user_text",
]
