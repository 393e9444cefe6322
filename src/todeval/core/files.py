"""Output files written whole or not at all.

:func:`write_atomic` writes to a temporary file beside the target, flushes it to disk and
renames it over the target (``os.replace``, atomic on POSIX and Windows): a full disk, a
killed process or a write error leaves the previous file exactly as it was (and no temporary
file behind), never a truncated one. Text is passed through :func:`todeval.core.redact.redact`
on the way, so no API key reaches a file through any writer. :func:`write_output` is the same
for command outputs, with the one-line error (exit 3) when the file cannot be written.

Append-only logs (``episodes.jsonl``, annotation answers) are not written this way: they are
appended one flushed line at a time.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import BinaryIO

from todeval.core.redact import redact
from todeval.errors import BadInputError


def write_atomic(path: str | Path, data: str | bytes, *, fsync: bool = True) -> None:
    """Replace ``path`` by ``data`` (text is UTF-8 and redacted) in one step.

    Raises ``OSError`` after removing the temporary file; ``path`` is then untouched. A new
    file gets the usual mode (0666 less the umask); an existing one keeps its mode.
    """
    target = Path(path)
    payload = redact(data).encode("utf-8") if isinstance(data, str) else data
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_all(fh, payload)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # a new file, or a target we may not chmod
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_all(fh: BinaryIO, payload: bytes) -> None:
    """The write itself (a seam for tests that fill the disk half-way through)."""
    fh.write(payload)


def cannot_write_output(path: str | Path, exc: OSError) -> BadInputError:
    """The one-line error for an output that could not be written."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return BadInputError(f"cannot write {path} ({reason}); any previous file there is unchanged")


def write_output(path: str | Path, data: str | bytes) -> None:
    """:func:`write_atomic` for a command's output file (``-o FILE``): a failure is one line
    and exit 3."""
    target = Path(path)
    if target.is_dir():
        raise BadInputError(f"cannot write {target}: it is a directory")
    try:
        write_atomic(target, data)
    except OSError as exc:
        raise cannot_write_output(target, exc) from None
