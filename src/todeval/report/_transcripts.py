"""Which transcripts a static report embeds: failures first, at most ``cap`` per run.

A report over a leaderboard's worth of runs cannot embed every episode (100 runs x 1,000
episodes of ~6.6 kB each would be ~665 MB), so each run contributes a bounded, useful set:

1. episodes that did not succeed, taken round-robin over their failure classes (the value of
   the benchmark's failure label, else the outcome), so a rare class is not crowded out by a
   common one; within a class, in file order;
2. then successes, in file order, until the cap is reached.

:class:`TranscriptPicker` sees the episodes once, as a stream, and keeps at most ``cap``
records per class: memory is bounded by the cap, never by the run's size. The chosen
transcripts are returned in file order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord

DEFAULT_TRANSCRIPTS = 50
"""Transcripts a static report embeds per run unless told otherwise (``--transcripts``)."""

TranscriptCap = int | Literal["all"]
"""How many transcripts per run: a number (0: none), or ``"all"``."""


def cap_value(cap: TranscriptCap) -> int | None:
    """The cap as a number, ``None`` for all; a negative number is a :class:`ValueError`."""
    if cap == "all":
        return None
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
        raise ValueError(f"transcripts: {cap!r} is not a number >= 0 or 'all'")
    return cap


def parse_cap(text: str) -> TranscriptCap:
    """``--transcripts N|all`` (a :class:`ValueError` for anything else)."""
    if text.strip().lower() == "all":
        return "all"
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number or 'all'") from None
    if value < 0:
        raise ValueError(f"{text!r} is negative")
    return value


@dataclass
class TranscriptPicker:
    """Streams a run's episodes, counting them and keeping a bounded set of transcripts.

    ``cap`` None keeps every record. ``failure_label`` names the label whose value is an
    episode's failure class (the benchmark profile's failure label)."""

    cap: int | None
    failure_label: str | None = None
    n_episodes: int = 0
    _order: dict[str, list[tuple[int, EpisodeRecord]]] = field(default_factory=dict)
    _successes: list[tuple[int, EpisodeRecord]] = field(default_factory=list)
    _all: list[EpisodeRecord] = field(default_factory=list)

    def _class(self, record: EpisodeRecord) -> str:
        if self.failure_label and record.labels.get(self.failure_label):
            return record.labels[self.failure_label]
        return record.outcome.value

    def offer(self, record: EpisodeRecord) -> None:
        number = self.n_episodes
        self.n_episodes += 1
        if self.cap is None:
            self._all.append(record)
            return
        if self.cap == 0:
            return
        if record.outcome is Outcome.SUCCESS:
            if len(self._successes) < self.cap:
                self._successes.append((number, record))
            return
        bucket = self._order.setdefault(self._class(record), [])
        if len(bucket) < self.cap:
            bucket.append((number, record))

    def tap(self, records: Iterable[EpisodeRecord]) -> Iterator[EpisodeRecord]:
        """Pass ``records`` through, offering each (to pick while another consumer streams)."""
        for record in records:
            self.offer(record)
            yield record

    def chosen(self) -> list[EpisodeRecord]:
        """The picked transcripts, in file order."""
        if self.cap is None:
            return list(self._all)
        picked: list[tuple[int, EpisodeRecord]] = []
        buckets = [list(reversed(b)) for b in self._order.values()]
        while len(picked) < self.cap and any(buckets):
            for bucket in buckets:
                if bucket and len(picked) < self.cap:
                    picked.append(bucket.pop())
        picked += self._successes[: self.cap - len(picked)]
        return [r for _, r in sorted(picked, key=lambda p: p[0])]
