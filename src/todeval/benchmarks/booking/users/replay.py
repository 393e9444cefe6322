"""``replay``: the user turns of a recorded run, said again in order (``--user replay
--transcripts RUN_DIR``).

Each episode replays the ``user_message`` events of the recorded episode of the same task and
trial, one per system message, whatever the system says -- so a human-user run (``--user
human``) can be played again against another system, or the same deterministic one to check
it reproduces. Running out of recorded turns ends the episode as the user's failure; a task the
recording lacks is refused when the episode starts.
"""

from __future__ import annotations

from typing import Any

from todeval.benchmarks.booking.protocol import UserContext, UserReply
from todeval.dialogue import PlayerOptions, ReplayParticipant

Recording = dict[str, list[str]]
"""Recorded user turns by episode id (``<task_id>#<trial>``)."""


def load_recording(run_dir: str) -> Recording:
    """The ``user_message`` texts of every episode of a booking run directory."""
    from todeval.dialogue.replay import recorded_turns

    turns = recorded_turns(run_dir, kind="user_message")
    return {f"{task}#{trial}": texts for (task, trial), texts in turns.items()}


class ReplayUser:
    """The recorded user of the same task and trial (``options.extra['replay']``)."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.player = ReplayParticipant([])

    @classmethod
    def from_options(cls, options: PlayerOptions) -> ReplayUser:
        recording: Any = options.extra.get("replay")
        if not isinstance(recording, dict):
            raise ValueError("the replay user needs a recording: pass --transcripts RUN_DIR")
        return cls(recording)

    async def start(self, context: UserContext) -> None:
        key = f"{context.task.task_id}#{context.trial}"
        if key not in self.recording:
            raise LookupError(f"the recording has no episode {key}")
        self.player = ReplayParticipant(self.recording[key])
        await self.player.start(context)

    async def respond(self, system_message: str | None) -> UserReply:
        return UserReply(text=await self.player.respond(system_message))


__all__ = ["ReplayUser", "load_recording"]
