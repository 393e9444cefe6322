"""Which world a task set plays in (:class:`~.model.World`; one per process and task set).

Every MultiWOZ task set plays in the world of three domain packs, its restaurant, hotel and
train (the tools, the validator's values and the database are generated from them, identical
to :func:`.model.multiwoz_world`'s from :mod:`..schema` and :mod:`..db`, which a test checks):

* ``test`` and ``dev`` -- ``data/multiwoz/packs/{restaurant,hotel,train}`` (MultiWOZ's
  database);
* ``synthetic`` -- ``packs/synthetic/*``: those packs (``extends``) on the synthetic database;
* ``unrealistic`` -- ``packs/unrealistic/*``: those packs with the set's own values, its
  database, only ``=`` to search with and no ``HH:MM`` pattern.

The game master plays in :func:`played_world`, which depends on the protocol: under
``clemtodd`` the ``test``, ``dev`` and ``synthetic`` worlds search and book in the database as
the original's code holds it (:func:`..db.original_database`: no value rewritten, three
restaurants under the original's names), under ``strict`` in the packs' normalised one.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from importlib import resources
from pathlib import Path

from todeval.benchmarks.booking.db import original_database
from todeval.benchmarks.booking.world.from_packs import pack_world, packs_world
from todeval.benchmarks.booking.world.model import PACK_PREFIX, World, is_pack

MULTIWOZ_PACKS = ("restaurant", "hotel", "train")
PACKED_SETS = ("test", "dev", "synthetic", "unrealistic")
"""The MultiWOZ task sets played in the world of its packs (all of them)."""
_VARIANTS = {"test": "", "dev": "", "synthetic": "synthetic", "unrealistic": "unrealistic"}
"""task set -> the folder under ``packs/`` holding its three packs (``""``: ``packs/``)"""


def multiwoz_pack_folders(task_set: str = "test") -> tuple[str, ...]:
    """The folders of the three packs a MultiWOZ task set plays (package data)."""
    node = resources.files("todeval") / "data" / "multiwoz" / "packs"
    if _VARIANTS[task_set]:
        node = node / _VARIANTS[task_set]
    return tuple(str(Path(str(node / name)).resolve()) for name in MULTIWOZ_PACKS)


@cache
def world_of(task_set: str) -> World:
    """The world of a task set: MultiWOZ's packs' for ``test``, ``dev``, ``synthetic`` and
    ``unrealistic`` (KeyError for another name), a domain pack's for ``pack:<folder>``."""
    if is_pack(task_set):
        return pack_world(task_set[len(PACK_PREFIX) :])
    if task_set not in PACKED_SETS:
        raise KeyError(task_set)
    return packs_world(multiwoz_pack_folders(task_set), task_set, from_pack=False)


ORIGINAL_DATA_SETS = ("test", "dev", "synthetic")
"""The task sets whose data todeval's normalisation or the JSON's names change: under
``clemtodd`` they are played in the original's database and read as given
(:func:`..tasks.load_tasks` ``as_given``)."""


@cache
def played_world(task_set: str, protocol: str) -> World:
    """The world the game master plays ``task_set`` in under ``protocol``: :func:`world_of`'s,
    with the original's database under ``clemtodd`` for :data:`ORIGINAL_DATA_SETS` (the tools,
    values and rules are the same)."""
    world = world_of(task_set)
    if protocol != "clemtodd" or task_set not in ORIGINAL_DATA_SETS:
        return world
    return dataclasses.replace(world, database=lambda: original_database(task_set))


__all__ = [
    "MULTIWOZ_PACKS",
    "ORIGINAL_DATA_SETS",
    "PACKED_SETS",
    "multiwoz_pack_folders",
    "played_world",
    "world_of",
]
