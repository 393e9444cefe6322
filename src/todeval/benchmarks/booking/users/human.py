"""``human``: a person plays the user in the terminal (the shared terminal participant).

The goal is shown when the dialogue starts; the person types each turn and ends the dialogue
with ``done``. A run with this user plays one episode at a time.
"""

from __future__ import annotations

from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.dialogue.human import TerminalParticipant


class HumanUser:
    """A person at the terminal, playing the customer of a booking goal."""

    interactive = True

    def __init__(self) -> None:
        self.terminal = TerminalParticipant(name="you", other="system")

    async def start(self, context: UserContext) -> None:
        await self.terminal.start(
            f"Your goal ({context.task.task_id}):\n{context.task.message}\n"
            "Type your messages; reply exactly 'done' when you have every reference number."
        )

    async def respond(self, system_message: str | None) -> UserReply:
        return UserReply(text=await self.terminal.respond(system_message))
