"""The world a booking episode plays in: what can be searched and booked, with which tools.

* :mod:`.model` -- :class:`~.model.World` (entities, tools and their JSON schemas, slots, the
  value normaliser, the database) and :func:`~.model.multiwoz_world`, MultiWOZ's world built
  from the schema's constants, the reference the packs' worlds are checked against;
* :mod:`.from_packs` -- a world generated from one or more domain packs;
* :mod:`.of_task_set` -- which world a task set plays in (:func:`~.of_task_set.world_of`) and
  the one the game master plays under a protocol (:func:`~.of_task_set.played_world`).

The package imports nothing itself: import the part you need.
"""
