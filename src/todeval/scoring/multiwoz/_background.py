"""Compute one function's result in a forked child process while the parent does other work.

Scoring a file has two independent halves: the text metrics (Moses normalisation, BLEU,
richness) and the dialogue metrics (states, database queries, Inform/Success). With
``parallel=True`` on a POSIX system a child process is forked that computes the first half and
sends its (small, pickled) result through a pipe while the parent computes the second. If the
child cannot be started or fails, the function is called in-process: the result is identical
either way, only the wall time differs.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
_PIPE_BYTES = 1 << 20


def _enlarge_pipe(fd: int) -> None:
    try:
        import fcntl

        size = getattr(fcntl, "F_SETPIPE_SZ", None)
        if size is not None:
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, size, _PIPE_BYTES)
    except ImportError:  # pragma: no cover - not POSIX
        return


class BackgroundCall(Generic[T]):
    """``function()``, computed by a forked child when possible (see the module docstring).

    ``in_process`` (default: ``function``) is what is called instead when there is no child or
    it failed: the caller may know more by then (e.g. validated input) and must make it give
    the same result as ``function`` wherever ``function`` succeeds."""

    def __init__(
        self,
        function: Callable[[], T],
        *,
        parallel: bool,
        in_process: Callable[[], T] | None = None,
    ) -> None:
        self._function = function
        self._in_process = in_process if in_process is not None else function
        self._pid: int | None = None
        self._read_fd: int | None = None
        if parallel and hasattr(os, "fork"):
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
                payload = pickle.dumps(self._function(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def _receive(self) -> tuple[bool, object]:
        """``(True, value)`` from a child that finished, else ``(False, None)``."""
        if self._read_fd is None or self._pid is None:
            return False, None
        parts = []
        while part := os.read(self._read_fd, 1 << 20):
            parts.append(part)
        os.close(self._read_fd)
        self._read_fd = None
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if status != 0:
            return False, None
        try:
            return True, pickle.loads(b"".join(parts))
        except (pickle.UnpicklingError, EOFError, ValueError, AttributeError, ImportError):
            return False, None

    def result(self) -> T:
        """The function's result (waits for the child if there is one)."""
        ok, value = self._receive()
        if ok:
            return value  # type: ignore[return-value]
        return self._in_process()

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
