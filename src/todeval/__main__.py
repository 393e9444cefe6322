"""The ``todeval`` command (``python -m todeval``): the CLI of :mod:`todeval.cli`, quiet about a
Ctrl-C that arrives while its modules are still being imported (exit 130, no traceback)."""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _interrupted_during_start_up(signum: int, frame: FrameType | None) -> None:
    print("todeval: interrupted", file=sys.stderr)
    raise SystemExit(130)


def run() -> None:
    """Import the CLI with SIGINT ending the process quietly, then run it."""
    previous = signal.signal(signal.SIGINT, _interrupted_during_start_up)
    try:
        from todeval.cli import main
    finally:
        signal.signal(signal.SIGINT, previous)
    sys.exit(main())


if __name__ == "__main__":
    run()
