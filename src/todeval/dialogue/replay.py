"""A participant that replays one side of recorded episodes.

:func:`recorded_turns` reads a run directory's ``episodes.jsonl`` and collects, per episode,
the texts of the events of one kind (``user_message``, ``seeker_message``, ...) in order;
:class:`ReplayParticipant` says them one by one, whatever it is told. When the recording runs
out it raises :class:`ReplayExhausted` (the episode ends as that participant's failure).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


Recording = dict[str, list[str]]
"""Recorded turns of one side by episode id (``<task_id>#<trial>``)."""


def episode_key(task_id: str, trial: int) -> str:
    return f"{task_id}#{trial}"


def recording_by_episode(run_dir: str | Path, *, kind: str) -> Recording:
    """:func:`recorded_turns` keyed by episode id."""
    turns = recorded_turns(run_dir, kind=kind)
    return {episode_key(task, trial): texts for (task, trial), texts in turns.items()}


class EpisodeReplay:
    """A role's recorded side across many episodes: :meth:`begin` picks the episode's turns,
    :meth:`respond` says them one by one. ``extra`` is the player options' extra, holding the
    recording under ``replay``; ``flag`` names the option that gives it (for the error)."""

    def __init__(self, extra: Mapping[str, Any], flag: str) -> None:
        recording = extra.get("replay")
        if not isinstance(recording, dict):
            raise ValueError(f"a replay player needs a recording: pass {flag}")
        self.recording: Recording = recording
        self.player = ReplayParticipant([])

    async def begin(self, task_id: str, trial: int, context: object = None) -> None:
        key = episode_key(task_id, trial)
        if key not in self.recording:
            raise LookupError(f"the recording has no episode {key}")
        self.player = ReplayParticipant(self.recording[key])
        await self.player.start(context)

    async def respond(self, observation: object) -> str:
        return await self.player.respond(observation)
