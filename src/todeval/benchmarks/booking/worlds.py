"""Which world a task set plays in (:class:`~.world.World`; one per process and task set).

MultiWOZ's ``test`` and ``dev`` sets play in the world of its three domain packs
(``data/multiwoz/packs/{restaurant,hotel,train}``: the tools, the validator's values and the
database are generated from them, identical to :mod:`.schema`'s, which a test checks);
``synthetic`` and ``unrealistic`` (their own data, values and operators) keep :mod:`.schema`'s.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from todeval.benchmarks.booking.domains.world import pack_world, packs_world
from todeval.benchmarks.booking.world import PACK_PREFIX, World, is_pack, multiwoz_world

MULTIWOZ_PACKS = ("restaurant", "hotel", "train")
PACKED_SETS = ("test", "dev")
"""The MultiWOZ task sets played in the world of its packs."""


def multiwoz_pack_folders() -> tuple[str, ...]:
    """The folders of MultiWOZ's three packs (package data)."""
    node = resources.files("todeval") / "data" / "multiwoz" / "packs"
    return tuple(str(Path(str(node / name)).resolve()) for name in MULTIWOZ_PACKS)


@cache
def world_of(task_set: str) -> World:
    """The world of a task set: MultiWOZ's for ``test``, ``dev``, ``synthetic`` and
    ``unrealistic`` (KeyError for another name), a domain pack's for ``pack:<folder>``."""
    if is_pack(task_set):
        return pack_world(task_set[len(PACK_PREFIX) :])
    if task_set in PACKED_SETS:
        return packs_world(multiwoz_pack_folders(), task_set, from_pack=False)
    return multiwoz_world(task_set)


__all__ = ["MULTIWOZ_PACKS", "PACKED_SETS", "multiwoz_pack_folders", "world_of"]
