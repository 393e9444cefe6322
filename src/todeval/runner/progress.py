"""Progress output for long runs.

On a terminal: one live line (done / in flight / failed, ETA, running success rate, tokens and
cost so far). Otherwise (a log file, CI, a pipe): the same as a plain line after the first
episode, then at most one line every ``interval`` seconds (default 5), and the last one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord

LOG_INTERVAL_S = 5.0
"""Seconds between progress lines when the output is not a terminal."""


class ProgressReporter:
    def __init__(
        self,
        total: int,
        *,
        success_metric: str | None = None,
        stream: TextIO | None = None,
        quiet: bool = False,
        live: bool | None = None,
        interval: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        limit: int | None = None,
    ) -> None:
        self.total = total
        # the most episodes played at once: an executor holding a few more queued (handed
        # over, waiting for a free slot) still shows no more than this in flight
        self.limit = limit
        self.success_metric = success_metric
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = self.stream.isatty() if live is None else live
        self.interval = interval
        self.clock = clock
        self.t0 = clock()
        self.printed_at: float | None = None
        self.done = 0
        self.in_flight = 0
        self.failed = 0
        self.successes = 0.0
        self.scored = 0
        self.tokens = 0
        self.cost = 0.0

    def started(self) -> None:
        self.in_flight += 1
        if self.live:
            self._render(None)

    def finished(self, record: EpisodeRecord) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self.done += 1
        if record.outcome is Outcome.INFRASTRUCTURE_ERROR:
            self.failed += 1
        elif self.success_metric and self.success_metric in record.metrics:
            self.scored += 1
            self.successes += record.metrics[self.success_metric]
        for usage in record.usage.values():
            self.tokens += usage.prompt_tokens + usage.completion_tokens
            self.cost += usage.cost_usd
        self._render(record)

    def close(self) -> None:
        """End a live line left open by a run that stopped early (Ctrl-C, an error), so the
        message that follows starts on a line of its own."""
        if self.live and not self.quiet and self.done != self.total:
            print(file=self.stream, flush=True)

    def line(self, record: EpisodeRecord | None) -> str:
        elapsed = self.clock() - self.t0
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        playing = self.in_flight if self.limit is None else min(self.in_flight, self.limit)
        parts = [
            f"[{self.done}/{self.total}]",
            f"in flight {playing}",
            f"failed {self.failed}",
        ]
        if self.scored:
            parts.append(f"{self.success_metric} {self.successes / self.scored:.3f}")
        if self.tokens:
            parts.append(f"tokens {self.tokens:,}")
        if self.cost:
            parts.append(f"${self.cost:.4f}")
        parts.append(f"{elapsed:.0f}s elapsed, ETA {eta:.0f}s")
        if record is not None and not self.live:
            parts.insert(1, f"{record.task_id}#{record.trial} {record.outcome.value}")
        return "  ".join(parts)

    def _render(self, record: EpisodeRecord | None) -> None:
        if self.quiet:
            return
        if self.live:
            end = "\n" if self.done == self.total else ""
            print("\r" + self.line(record)[:160].ljust(100), end=end, file=self.stream, flush=True)
            return
        if record is None:
            return
        now = self.clock()
        due = self.printed_at is None or now - self.printed_at >= self.interval
        if due or self.done == self.total:
            self.printed_at = now
            print(self.line(record), file=self.stream, flush=True)
