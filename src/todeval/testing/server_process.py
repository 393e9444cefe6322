"""Start a test server (:mod:`todeval.testing.openai_server`, or any module run the same way:
:class:`ChildServer`) as a real process on 127.0.0.1.

with ServerProcess(ServerConfig(script=..., faults=FaultConfig(error_500=0.1))) as server:
    backend = make_backend(f"openai:scripted@{server.base_url}")
    ...
    print(server.stats())
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self, TextIO

from pydantic import BaseModel

from todeval.testing.openai_server import ServerConfig


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (just bound and released): connections to it
    are refused, or a server started next may take it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def stop_process(process: subprocess.Popen[str]) -> None:
    """Terminate a child (killed after 10 s) and close its stdout pipe."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


class ChildServer:
    """A test server module (``python -m <module> --host 127.0.0.1 --port 0 --config FILE``)
    in a child process that prints its port on its first stdout line; a context manager that
    stops it on exit. Subclasses name the ``module`` and what ``config`` it reads."""

    module: ClassVar[str]
    noun: ClassVar[str] = "test server"

    def __init__(self, config: BaseModel, *, start_timeout_s: float = 30.0) -> None:
        self.config = config
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._stderr: TextIO | None = None
        self._stderr_path = Path()

    @property
    def root_url(self) -> str:
        if self.port is None:
            raise RuntimeError(f"{self.noun} not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._dir = tempfile.TemporaryDirectory(prefix="todeval-server-")
        config_path = Path(self._dir.name) / "config.json"
        config_path.write_text(self.config.model_dump_json(), encoding="utf-8")
        self._stderr_path = Path(self._dir.name) / "stderr.log"
        self._stderr = self._stderr_path.open("w", encoding="utf-8")  # never a full pipe
        self._proc = subprocess.Popen(
            [sys.executable, "-m", self.module, "--host", "127.0.0.1", "--port", "0",
             "--config", str(config_path)],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        line: list[str] = []
        stdout = self._proc.stdout
        assert stdout is not None
        reader = threading.Thread(target=lambda: line.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout_s)
        if not line or not line[0].strip().isdigit():
            self._proc.poll()
            error = self._stderr_path.read_text(encoding="utf-8", errors="replace")
            self.close()
            raise RuntimeError(f"{self.noun} did not start: {error.strip()[:500]}")
        self.port = int(line[0])
        return self

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.root_url}{path}", timeout=10) as response:
            return json.loads(response.read())

    def close(self) -> None:
        if self._proc is not None:
            stop_process(self._proc)
        self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class ServerProcess(ChildServer):
    """The OpenAI-compatible test server in a child process."""

    module = "todeval.testing.openai_server"
    config: ServerConfig

    def __init__(self, config: ServerConfig | None = None, *, start_timeout_s: float = 30.0):
        super().__init__(config or ServerConfig(), start_timeout_s=start_timeout_s)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, what an OpenAI client takes as ``base_url``."""
        return f"{self.root_url}/v1"

    def stats(self) -> dict[str, Any]:
        """Request and fault counts, peak requests in flight."""
        result: dict[str, Any] = self._get("/_stats")
        return result

    def requests(self) -> list[dict[str, Any]]:
        """The last request bodies received (``{"body": ..., "authorization_sent": bool}``)."""
        result: list[dict[str, Any]] = self._get("/_requests")
        return result
