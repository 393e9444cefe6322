"""Run the Moses normalisation of many responses in a forked child process.

The Moses round trip (sacremoses import plus a few hundred microseconds per response) is the
largest single cost of scoring a file. With ``parallel=True`` on a POSIX system a child process
is forked that imports sacremoses and normalises the texts while the parent prepares everything
else (references, database, Inform/Success). Results come back through a pipe. If the child
cannot be started or fails, the texts are normalised in-process: the results are identical
either way, only the wall time differs.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from collections.abc import Callable, Sequence

RoundTrip = Callable[[str], str]


class BackgroundMap:
    """``[function(t) for t in texts]``, computed by a forked child when possible."""

    def __init__(
        self, make_function: Callable[[], RoundTrip], texts: Sequence[str], *, parallel: bool
    ) -> None:
        self._make = make_function
        self._texts = list(texts)
        self._pid: int | None = None
        self._read_fd: int | None = None
        self._result: list[str] | None = None
        if parallel and self._texts and hasattr(os, "fork"):
            self._start()

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
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
                function = self._make()
                payload = pickle.dumps([function(t) for t in self._texts], protocol=5)
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def _collect(self) -> list[str] | None:
        if self._pid is None or self._read_fd is None:
            return None
        with os.fdopen(self._read_fd, "rb") as pipe:
            payload = pipe.read()
        self._read_fd = None
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if status != 0 or not payload:
            return None
        try:
            values = pickle.loads(payload)
        except (pickle.UnpicklingError, EOFError, ValueError):
            return None
        if not isinstance(values, list) or len(values) != len(self._texts):
            return None
        return [str(v) for v in values]

    def result(self) -> list[str]:
        """The mapped texts, in input order (waits for the child if there is one)."""
        if self._result is None:
            values = self._collect()
            if values is None:
                function = self._make()
                values = [function(t) for t in self._texts]
            self._result = values
        return self._result

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
