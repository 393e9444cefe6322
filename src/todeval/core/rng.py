"""Per-episode random number generators.

Every random choice in an episode comes from an RNG derived from (run seed, task id, trial,
stream name), so results never depend on execution order or on other episodes.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(run_seed: int, task_id: str, trial: int, stream: str = "") -> int:
    """A stable 63-bit seed for one episode (and optionally one named stream within it)."""
    key = f"{run_seed}\x1f{task_id}\x1f{trial}\x1f{stream}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1


def episode_rng(run_seed: int, task_id: str, trial: int, stream: str) -> random.Random:
    """An independent ``random.Random`` for one named stream of one episode."""
    return random.Random(derive_seed(run_seed, task_id, trial, stream))
