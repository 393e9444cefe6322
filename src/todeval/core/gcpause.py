"""Pausing Python's cyclic garbage collector around bounded, allocation-heavy work.

Start-up (importing modules, building classes and the command line's parser) and a batch
computation such as scoring a whole file allocate many objects that stay alive until the work
ends; the collector would scan them again and again without freeing anything (a whole
``todeval score`` run spends about 15% of its CPU time there). Reference counting still frees
everything as usual; only cycles wait until the collector runs again after the pause.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; its previous state is restored after
    (nested pauses and a collector already disabled by the caller are left as they were)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
