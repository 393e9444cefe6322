"""The corpus user: replays the user turns of the goal's original MultiWOZ dialogue.

It ignores what the system says: turn *k* of the episode is the *k*-th recorded user turn, and
after the last one it says ``done``. This measures a system against real human wording, but
the user cannot react (a system that asks for something the human gave later, or in other
words, gets no help). Only the test and dev sets carry the original dialogues.
"""

from __future__ import annotations

from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.benchmarks.booking.tasks import TASK_SETS
from todeval.benchmarks.booking.users.ending import EndReason
from todeval.errors import UsageError, choice_error

CORPUS_TASK_SETS = ("test", "dev")
DONE = "done"


def _no_corpus(task_set: str) -> UsageError:
    return UsageError(
        f"the corpus user needs MultiWOZ dialogues; task set {task_set} has none (use test or dev)"
    )


class CorpusUser:
    """Replays ``task.corpus_turns`` user turns in order, one per reply, then ``done``.

    ``gave_up`` is always False; ``end_reason`` is :attr:`EndReason.CORPUS_REPLAYED` once the
    recorded turns are used up.
    """

    def __init__(self) -> None:
        self.gave_up = False
        self.end_reason: EndReason | None = None
        self._turns: list[str] = []
        self._next = 0

    @staticmethod
    def check_selection(task_set: str) -> None:
        """Raise :class:`UsageError` unless ``task_set`` has corpus dialogues (CLI pre-check)."""
        if task_set not in TASK_SETS:
            raise choice_error("task set", task_set, list(TASK_SETS))
        if task_set not in CORPUS_TASK_SETS:
            raise _no_corpus(task_set)

    async def start(self, context: UserContext) -> None:
        task = context.task
        self.check_selection(task.task_set)
        turns = [t.text.strip() for t in task.corpus_turns if t.speaker == "user"]
        self._turns = [t for t in turns if t]
        if not self._turns:
            raise UsageError(
                f"the corpus user needs MultiWOZ dialogues; task {task.task_id} has none"
            )
        self._next = 0

    async def respond(self, system_message: str | None) -> UserReply:
        if self._next < len(self._turns):
            text = self._turns[self._next]
            self._next += 1
            return UserReply(text=text)
        self.end_reason = EndReason.CORPUS_REPLAYED
        return UserReply(text=DONE)
