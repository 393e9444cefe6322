"""What several bench scripts share: timing a child process (wall and its CPU) and an
environment that keeps (or recompiles) bytecode."""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import time


def child_cpu() -> float:
    """User + system CPU seconds of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    command: list[str], env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run ``command``; its result, wall seconds and CPU seconds. A failure stops the bench."""
    cpu0, t0 = child_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall, cpu = time.perf_counter() - t0, child_cpu() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    return done, wall, cpu


def bytecode_env(keep: bool) -> tuple[dict[str, str], tempfile.TemporaryDirectory[str] | None]:
    """The environment for child processes; with ``keep``, bytecode goes to a temporary
    directory (returned, to be cleaned up) instead of being recompiled on every run."""
    env = dict(os.environ)
    if not keep:
        return env, None
    cache = tempfile.TemporaryDirectory(prefix="todeval-pyc-")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache.name
    return env, cache
