"""Information boundaries: what a role's players are handed, and who may be handed more.

The game master of an episode knows everything: the task with its answer key (a response
tree's texts, a simulated user's whole goal, a turn's gold labels). A role declares its
*view*: a function from that full start context to the typed object its players receive
(:attr:`todeval.dialogue.Role.view`). :meth:`Role.start` applies it, so a player is never handed
the full context by accident.

A player class that sets ``privileged = True`` receives the full context instead, and the
run's :attr:`PlayerOptions.privileged` (an answer key, cross-fitted examples from the
evaluation set). Such a player is a *control*: the run's manifest marks its role as privileged,
the console says so, and reports show it apart from the agents under test, never ranked beside
them. A third-party ``package.module:Class`` may declare itself privileged too; it is then
shown as a control like the built-in ones.

Only what is *handed* is bounded here: a player running in the same Python process could still
read files from disk. The agent channels (:mod:`todeval.agents`) run the player out of process
and send it nothing but the view's text.
"""

from __future__ import annotations

from typing import Any


def is_privileged(player: object) -> bool:
    """Whether ``player`` (a class or an instance) declares itself privileged (a control)."""
    cls = player if isinstance(player, type) else type(player)
    return getattr(cls, "privileged", False) is True


def same_view(context: Any) -> Any:
    """The view of a role whose start context holds nothing of the answer key (the identity).

    Use it only where the context was built for this role alone; a snooper test
    (:func:`todeval.testing.snoop.leaks`) should show it."""
    return context


__all__ = ["is_privileged", "same_view"]
