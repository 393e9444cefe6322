"""Run the Moses normalisation of many responses in a forked child process, streamed.

The Moses round trip (a few tens of microseconds per distinct response) is one of the largest
costs of scoring a file. With ``parallel=True`` on a POSIX system a child process is forked
that normalises the texts while the parent prepares everything else (references, database, Inform/Success). The child sends its results in chunks through a
pipe (enlarged where Linux allows, so the child rarely waits for the parent), and the parent
consumes each chunk as soon as it is free. If the child cannot be started or fails, the missing
texts are normalised in-process: the results are identical either way, only the wall time
differs.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
from collections.abc import Callable, Iterator, Sequence

RoundTrip = Callable[[str], str]
CHUNK = 256
_HEADER = struct.Struct("<I")
_PIPE_BYTES = 1 << 22


def _enlarge_pipe(fd: int) -> None:
    try:
        import fcntl

        size = getattr(fcntl, "F_SETPIPE_SZ", None)
        if size is not None:
            for limit in (_PIPE_BYTES, 1 << 20):
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, size, limit)
                    return
    except ImportError:  # pragma: no cover - not POSIX
        return


def _read_exact(fd: int, size: int) -> bytes | None:
    parts = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


class BackgroundMap:
    """``[function(t) for t in texts]``, computed by a forked child when possible."""

    def __init__(
        self, make_function: Callable[[], RoundTrip], texts: Sequence[str], *, parallel: bool
    ) -> None:
        self._make = make_function
        self._texts = list(texts)
        self._pid: int | None = None
        self._read_fd: int | None = None
        self._done: list[str] = []
        if parallel and self._texts and hasattr(os, "fork"):
            self._start()

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        _enlarge_pipe(write_fd)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:  # child: compute, send, leave without running the parent's cleanup
            status = 1
            try:
                os.close(read_fd)
                self._serve(write_fd)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def _serve(self, fd: int) -> None:
        function = self._make()
        with os.fdopen(fd, "wb") as pipe:
            for start in range(0, len(self._texts), CHUNK):
                chunk = [function(t) for t in self._texts[start : start + CHUNK]]
                payload = pickle.dumps(chunk, protocol=5)
                pipe.write(_HEADER.pack(len(payload)) + payload)
                pipe.flush()

    def _receive(self) -> list[str] | None:
        """The child's next chunk, or ``None`` once it has nothing (more) to give."""
        if self._read_fd is None:
            return None
        header = _read_exact(self._read_fd, _HEADER.size)
        payload = _read_exact(self._read_fd, _HEADER.unpack(header)[0]) if header else None
        if payload is None:
            self._finish_child()
            return None
        try:
            chunk = pickle.loads(payload)
        except (pickle.UnpicklingError, EOFError, ValueError):
            self.close()
            return None
        if not isinstance(chunk, list) or not all(isinstance(v, str) for v in chunk):
            self.close()
            return None
        return chunk

    def _finish_child(self) -> None:
        if self._read_fd is not None:
            os.close(self._read_fd)
            self._read_fd = None
        if self._pid is not None:
            os.waitpid(self._pid, 0)
            self._pid = None

    def chunks(self) -> Iterator[list[str]]:
        """The results in input order, chunk by chunk, as the child delivers them."""
        if self._done:
            yield list(self._done)
        while len(self._done) < len(self._texts):
            chunk = self._receive()
            if chunk is None:
                break
            chunk = chunk[: len(self._texts) - len(self._done)]
            self._done.extend(chunk)
            yield chunk
        if len(self._done) < len(self._texts):  # no child, or it stopped early
            self.close()
            function = self._make()
            rest = [function(t) for t in self._texts[len(self._done) :]]
            self._done.extend(rest)
            yield rest
        self._finish_child()

    def result(self) -> list[str]:
        """All mapped texts, in input order (waits for the child if there is one)."""
        for _ in self.chunks():
            pass
        return list(self._done)

    def close(self) -> None:
        """Stop and reap the child if it is still running (safe to call twice)."""
        if self._read_fd is not None:
            os.close(self._read_fd)
            self._read_fd = None
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = None
