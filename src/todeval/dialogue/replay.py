"""A participant that replays one side of recorded episodes.

:func:`recorded_turns` reads a run directory's ``episodes.jsonl`` and collects, per episode,
the texts of the events of one kind (``user_message``, ``seeker_message``, ...) in order;
:class:`ReplayParticipant` says them one by one, whatever it is told. When the recording runs
out it raises :class:`ReplayExhausted` (the episode ends as that participant's failure).
"""

from __future__ import annotations

from pathlib import Path

from todeval.errors import BadInputError
from todeval.runner.store import RunDirectory


class ReplayExhausted(Exception):
    """The recorded side has no more turns."""


def recorded_turns(
    run_dir: str | Path, *, kind: str, field: str = "text"
) -> dict[tuple[str, int], list[str]]:
    """(task id, trial) -> the ``data[field]`` of every ``kind`` event, in order."""
    store = RunDirectory(Path(run_dir))
    if not store.episodes_path.is_file():
        raise BadInputError(f"{run_dir}: no {store.episodes_path.name} to replay")
    out: dict[tuple[str, int], list[str]] = {}
    for record in store.iter_episodes():
        out[record.key] = [str(e.data.get(field, "")) for e in record.events if e.kind == kind]
    return out


class ReplayParticipant:
    """Replays a fixed list of texts, one per call."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.position = 0

    async def start(self, context: object) -> None:
        self.position = 0

    async def respond(self, observation: object) -> str:
        if self.position >= len(self.texts):
            raise ReplayExhausted(f"the recording has only {len(self.texts)} turn(s)")
        text = self.texts[self.position]
        self.position += 1
        return text
