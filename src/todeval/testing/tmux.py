"""A tmux harness for terminal-participant tests: a person typing, played by send-keys.

``Tmux(name)`` runs its own tmux server (its own socket, ``tmux -L name``), so no other session
is touched; ``start(shell_command)`` opens a detached session running it, ``screen()`` reads the
pane, ``type(text)`` sends a line, ``wait_for(pattern)`` polls the pane (bounded), ``close()``
kills the server. Use it in a ``with`` block.
"""

from __future__ import annotations

import re
import subprocess
import time


class Tmux:
    """One private tmux server with one session."""

    def __init__(self, name: str, *, width: int = 200, height: int = 50) -> None:
        self.name = name
        self.base = ["tmux", "-L", name]
        self.size = (str(width), str(height))

    def __call__(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, check=True)
        return done.stdout

    def start(self, shell_command: str) -> None:
        """Run ``shell_command`` in a new detached session."""
        width, height = self.size
        self("new-session", "-d", "-s", self.name, "-x", width, "-y", height, shell_command)

    def screen(self) -> str:
        """The pane's text, with up to 200 lines of history."""
        return self("capture-pane", "-p", "-J", "-S", "-200", "-t", self.name)

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self("send-keys", "-t", self.name, text, "Enter")

    def wait_for(self, pattern: str, *, timeout_s: float = 30.0) -> str:
        """Poll the pane until ``pattern`` (a regular expression, multiline) appears; the
        screen. Raises :class:`TimeoutError` with the last screen after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if re.search(pattern, screen, re.MULTILINE):
                return screen
            time.sleep(0.05)
        raise TimeoutError(f"{pattern!r} did not appear within {timeout_s:g} s:\n{screen}")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, check=False)

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
