"""Offline user simulators for the self-play booking benchmark.

* :class:`AgendaUser` -- goal-driven and rule-based: states the goal's constraints, tries the
  ``fail_*`` values first, answers questions, asks to book, collects references, says ``done``.
* :class:`CorpusUser` -- replays the user turns of the goal's original MultiWOZ dialogue
  (test and dev sets only).

Both implement :class:`todeval.benchmarks.booking.messages.UserSimulator` and expose
``gave_up`` and ``end_reason`` (an :class:`EndReason`) for the game master.
"""

from __future__ import annotations

from todeval.benchmarks.booking.users.agenda import AgendaUser
from todeval.benchmarks.booking.users.corpus import CorpusUser
from todeval.benchmarks.booking.users.ending import EndReason

__all__ = ["AgendaUser", "CorpusUser", "EndReason"]
