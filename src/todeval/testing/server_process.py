"""Start :mod:`todeval.testing.openai_server` as a real process on 127.0.0.1.

with ServerProcess(ServerConfig(script=..., faults=FaultConfig(error_500=0.1))) as server:
    backend = make_backend(f"openai:scripted@{server.base_url}")
    ...
    print(server.stats())
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from todeval.testing.openai_server import ServerConfig


class ServerProcess:
    """The test server in a child process; a context manager that stops it on exit."""

    def __init__(self, config: ServerConfig | None = None, *, start_timeout_s: float = 30.0):
        self.config = config or ServerConfig()
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._stderr: TextIO | None = None
        self._stderr_path = Path()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, what an OpenAI client takes as ``base_url``."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServerProcess:
        self._dir = tempfile.TemporaryDirectory(prefix="todeval-server-")
        config_path = Path(self._dir.name) / "config.json"
        config_path.write_text(self.config.model_dump_json(), encoding="utf-8")
        self._stderr_path = Path(self._dir.name) / "stderr.log"
        self._stderr = self._stderr_path.open("w", encoding="utf-8")  # never a full pipe
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "todeval.testing.openai_server",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--config",
                str(config_path),
            ],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
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
            raise RuntimeError(f"test server did not start: {error.strip()[:500]}")
        self.port = int(line[0])
        return self

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.root_url}{path}", timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        """Request and fault counts, peak requests in flight."""
        result: dict[str, Any] = self._get("/_stats")
        return result

    def requests(self) -> list[dict[str, Any]]:
        """The last request bodies received (``{"body": ..., "authorization_sent": bool}``)."""
        result: list[dict[str, Any]] = self._get("/_requests")
        return result

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc is not None and self._proc.stdout is not None:
            self._proc.stdout.close()
        self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
