"""Which world a task set plays in (:class:`~.world.World`; one per process and task set)."""

from __future__ import annotations

from functools import cache

from todeval.benchmarks.booking.domains.world import pack_world
from todeval.benchmarks.booking.world import PACK_PREFIX, World, is_pack, multiwoz_world


@cache
def world_of(task_set: str) -> World:
    """The world of a task set: MultiWOZ's for ``test``, ``dev``, ``synthetic`` and
    ``unrealistic`` (KeyError for another name), a domain pack's for ``pack:<folder>``."""
    if is_pack(task_set):
        return pack_world(task_set[len(PACK_PREFIX) :])
    return multiwoz_world(task_set)


__all__ = ["world_of"]
