"""What a benchmark declares to have its recorded trajectories checked by replay.

A benchmark's spec names a :class:`Replay` (``BenchmarkSpec.replay``). ``todeval submit
verify`` starts it once per submitted run with the run's context (the recorded config and every
task of its set, no player built) and the run's other files (a per-run secret, a prediction
file), and hands the :class:`Replayer` it returns each recorded episode with its task. The
replayer plays again what the world answered -- a database, a rule-based simulator, a candidate
draw, a scorer -- from what the agent under test said, and returns a :class:`Mismatch` for each
place where the record claims something the world would not have answered. Nothing here knows a
benchmark; each one writes its own replay beside its rules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from todeval.core.events import Event
from todeval.core.records import EpisodeRecord, Summary

if TYPE_CHECKING:
    from todeval.spec.declare import RunContext

C = TypeVar("C")
T = TypeVar("T")


@dataclass(frozen=True)
class Mismatch:
    """One place where a record is not what the replay gives."""

    what: str
    """one line: what the record says and what the replay gives"""
    turn: int | None = None
    """the turn it happened in (``None``: the episode or run as a whole)"""


@dataclass(frozen=True)
class Replayer(Generic[T]):
    """One run's replay: a check per episode and, optionally, one over the whole run."""

    episode: Callable[[T, EpisodeRecord], Awaitable[Sequence[Mismatch]]]
    """the mismatches of one recorded episode of a task (empty: it happened as recorded)"""
    replays: str
    """what is re-derived, in a few words (printed with the verdict)"""
    cannot: tuple[str, ...] = ()
    """what this run's replay cannot re-derive (an LLM provider's replies, say): printed as
    limits of the verdict, never a refusal"""
    run: Callable[[Sequence[EpisodeRecord], Summary | None], Sequence[Mismatch]] | None = None
    """a check over every record and the stored summary (a corpus score re-computed)"""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def first_difference(recorded: Any, replayed: Any, where: str) -> str | None:
    """The first path at which two JSON values differ, with both values (``None``: equal)."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in list(dict.fromkeys([*recorded, *replayed])):
            if key not in recorded:
                return f"{where}.{key}: missing from the record ({_short(replayed[key])} replayed)"
            if key not in replayed:
                return f"{where}.{key}: {_short(recorded[key])} recorded, not given by the replay"
            found = first_difference(recorded[key], replayed[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) != len(replayed):
            return f"{where}: {len(recorded)} items recorded, {len(replayed)} replayed"
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=True)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    if recorded != replayed:
        return f"{where}: {_short(recorded)} recorded, {_short(replayed)} replayed"
    return None


def compare_events(recorded: Sequence[Event], replayed: Sequence[Event]) -> Mismatch | None:
    """The first event where a replayed episode parts from the recorded one (kind, actor,
    turn, then data; the time is never compared), with its turn."""
    for rec, rep in zip(recorded, replayed, strict=False):
        if (rec.kind, rec.actor) != (rep.kind, rep.actor):
            return Mismatch(
                f"the record has {rec.kind} by {rec.actor}, the replay gives {rep.kind} "
                f"by {rep.actor}" + (f" ({_short(rep.data.get('reason'))})"
                                     if rep.kind == "episode_end" else ""),
                rec.turn,
            )  # fmt: skip
        if rec.turn != rep.turn:
            return Mismatch(f"{rec.kind} recorded in turn {rec.turn}, replayed in {rep.turn}")
        found = first_difference(rec.data, rep.data, rec.kind)
        if found:
            return Mismatch(found, rec.turn)
    if len(recorded) > len(replayed):
        extra = recorded[len(replayed)]
        return Mismatch(f"the record goes on ({extra.kind}) after the replay ended it", extra.turn)
    if len(replayed) > len(recorded):
        more = replayed[len(recorded)]
        return Mismatch(f"the record ends before the replay's {more.kind}", more.turn)
    return None


RunFiles = Mapping[str, bytes]
"""The run directory's files besides ``manifest.json``, ``episodes.jsonl`` and
``summary.json``, by name (a per-run key file, a prediction file)."""


@dataclass(frozen=True)
class Replay(Generic[C, T]):
    """How a benchmark's runs are replayed (a spec's ``replay``)."""

    start: Callable[[RunContext[Any, T], RunFiles], Replayer[T]]
    """the run's replayer, from its context and files (a :class:`~todeval.errors.RefusedError`
    when the run cannot be replayed at all: a key file missing)"""
    set_keys: tuple[str, ...] = field(default=())
    """config fields that choose what is played (a track, a split): a board each, never a
    departure from the standard protocol"""


__all__ = [
    "Mismatch",
    "Replay",
    "Replayer",
    "RunFiles",
    "compare_events",
    "first_difference",
]
