"""Which transcripts a static report embeds: failures first, at most ``cap`` per run.

A report over a leaderboard's worth of runs cannot embed every episode (100 runs x 1,000
episodes of ~6.6 kB each would be ~665 MB), so each run contributes a bounded, useful set:

1. episodes that did not succeed, taken round-robin over their failure classes (the value of
   the benchmark's failure label, else the outcome), so a rare class is not crowded out by a
   common one; within a class, in file order;
2. then successes, in file order, until the cap is reached.

:class:`TranscriptPicker` sees the episodes once, as a stream, and keeps at most ``cap``
records per class: memory is bounded by the cap, never by the run's size. The chosen
transcripts are returned in file order, as :class:`Transcripts`: each one's page view as JSON,
ready to embed, and its line as read -- text, not objects, so a report of 100 runs holds its
5,000 transcripts in ~80 MB rather than ~330 MB.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from pydantic import BaseModel, Field

from todeval.core.events import Event
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, EpisodeReview
from todeval.report.explain import Explainer, explanation

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


_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


_WIDE = re.compile("[^\x00-\xff]")


def _wide_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # a surrogate pair, as JSON writes it
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def script_safe_json(text: str) -> str:
    """JSON text that is inert inside a ``<script>`` element (and still the same JSON).

    Characters past U+00FF are written as ``\\uXXXX`` escapes too (they occur only inside
    JSON strings, so the JSON is the same): Python keeps a text of Latin-1 characters at one
    byte each, but one ``✓`` in a transcript makes the whole text two bytes a character (an
    emoji: four), and a report joins tens of MB of these."""
    for char, escape in _JSON_ESCAPES:  # one C-speed pass each
        if char in text:
            text = text.replace(char, escape)
    if not text.isascii() and max(text) > "\xff":
        text = _WIDE.sub(_wide_escape, text)
    return text


class EpisodeView(BaseModel):
    """One episode as the page renders it (embedded in a static report, or /api/episode)."""

    run: str = Field(description="run key")
    id: str
    task: str
    trial: int
    group: str
    outcome: str
    reason: str
    turns: int
    seed: str = Field(description="as text: the 64-bit seed does not fit a JS number")
    labels: dict[str, str]
    metrics: dict[str, float]
    events: list[Event]
    details: dict[str, Any]
    usage: dict[str, dict[str, Any]]
    duration_s: float
    started_at: str
    review: EpisodeReview | None = Field(None, description="who failed, with each fault's turn")
    explanation: dict[str, Any] | None = Field(
        None, description="how the score was computed (the benchmark's explainer), if any"
    )


def episode_view(run: str, r: EpisodeRecord, explain: Explainer | None = None) -> EpisodeView:
    return EpisodeView(
        run=run,
        id=r.episode_id,
        task=r.task_id,
        trial=r.trial,
        group=r.group,
        outcome=r.outcome.value,
        reason=r.reason,
        turns=r.turns,
        seed=str(r.seed),
        labels=r.labels,
        metrics=r.metrics,
        events=r.events,
        details=r.details,
        usage={role: u.model_dump(exclude={"call_latencies_s"}) for role, u in r.usage.items()},
        duration_s=r.timing.duration_s,
        started_at=r.timing.started_at,
        review=r.review,
        explanation=explanation(explain, r),
    )


class Transcripts(Sequence[EpisodeRecord]):
    """A run's picked transcripts, held as text: each one's :class:`EpisodeView` as
    script-safe JSON (``views``, what a static report embeds) and its line as read. An item
    asked for is read from its line again (the report itself only embeds the views)."""

    def __init__(
        self,
        run: str = "",
        picked: Iterable[tuple[EpisodeRecord, bytes]] = (),
        explain: Explainer | None = None,
    ) -> None:
        self._lines: list[bytes] = []
        self.views: list[str] = []
        for record, line in picked:
            self._lines.append(line or record.model_dump_json().encode("utf-8"))
            view = episode_view(run, record, explain)
            self.views.append(script_safe_json(view.model_dump_json(exclude_none=True)))

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> EpisodeRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[EpisodeRecord]: ...

    def __getitem__(self, index: int | slice) -> EpisodeRecord | list[EpisodeRecord]:
        if isinstance(index, slice):
            return [EpisodeRecord.model_validate_json(line) for line in self._lines[index]]
        return EpisodeRecord.model_validate_json(self._lines[index])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Transcripts):
            return self._lines == other._lines
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} transcripts>"


@dataclass
class TranscriptPicker:
    """Streams a run's episodes, counting them and keeping a bounded set of transcripts.

    ``cap`` None keeps every record. ``failure_label`` names the label whose value is an
    episode's failure class (the benchmark profile's failure label)."""

    cap: int | None
    failure_label: str | None = None
    n_episodes: int = 0
    _order: dict[str, list[tuple[int, EpisodeRecord, bytes]]] = field(default_factory=dict)
    _successes: list[tuple[int, EpisodeRecord, bytes]] = field(default_factory=list)
    _all: list[tuple[int, EpisodeRecord, bytes]] = field(default_factory=list)

    def _class(self, record: EpisodeRecord) -> str:
        if self.failure_label and record.labels.get(self.failure_label):
            return record.labels[self.failure_label]
        return record.outcome.value

    def offer(self, record: EpisodeRecord, line: bytes = b"") -> None:
        """Count ``record`` and keep it if it may be shown (with ``line``, its line as read)."""
        number = self.n_episodes
        self.n_episodes += 1
        if self.cap is None:
            self._all.append((number, record, line))
            return
        if self.cap == 0:
            return
        if record.outcome is Outcome.SUCCESS:
            if len(self._successes) < self.cap:
                self._successes.append((number, record, line))
            return
        bucket = self._order.setdefault(self._class(record), [])
        if len(bucket) < self.cap:
            bucket.append((number, record, line))

    def tap(self, records: Iterable[EpisodeRecord]) -> Iterator[EpisodeRecord]:
        """Pass ``records`` through, offering each (to pick while another consumer streams)."""
        for record in records:
            self.offer(record)
            yield record

    def chosen(self) -> list[EpisodeRecord]:
        """The picked transcripts, in file order."""
        return [record for record, _ in self.picked()]

    def picked(self) -> list[tuple[EpisodeRecord, bytes]]:
        """The picked transcripts with their lines as offered, in file order."""
        if self.cap is None:
            return [(record, line) for _, record, line in self._all]
        picked: list[tuple[int, EpisodeRecord, bytes]] = []
        buckets = [list(reversed(b)) for b in self._order.values()]
        while len(picked) < self.cap and any(buckets):
            for bucket in buckets:
                if bucket and len(picked) < self.cap:
                    picked.append(bucket.pop())
        picked += self._successes[: self.cap - len(picked)]
        return [(record, line) for _, record, line in sorted(picked, key=lambda p: p[0])]
