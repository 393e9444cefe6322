"""``replay``: the user turns of a recorded run, said again in order (``--user replay
--transcripts RUN_DIR``).

Each episode replays the ``user_message`` events of the recorded episode of the same task and
trial, one per system message, whatever the system says -- so a human-user run (``--user
human``) can be played again against another system, or the same deterministic one to check
it reproduces. Running out of recorded turns ends the episode as the user's failure; a task the
recording lacks is that episode's user-simulator error.
"""

from __future__ import annotations

from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.dialogue import EpisodeReplay, PlayerOptions
from todeval.dialogue.replay import Recording, recording_by_episode


def load_recording(run_dir: str) -> Recording:
    """The ``user_message`` texts of every episode of a booking run directory."""
    return recording_by_episode(run_dir, kind="user_message")


class ReplayUser:
    """The recorded user of the same task and trial (``options.extra['replay']``)."""

    def __init__(self, options: PlayerOptions) -> None:
        self.replay = EpisodeReplay(options.extra, "--transcripts RUN_DIR")

    @classmethod
    def from_options(cls, options: PlayerOptions) -> ReplayUser:
        return cls(options)

    async def start(self, context: UserContext) -> None:
        await self.replay.begin(context.task.task_id, context.trial, context)

    async def respond(self, system_message: str | None) -> UserReply:
        return UserReply(text=await self.replay.respond(system_message))


__all__ = ["ReplayUser", "load_recording"]
