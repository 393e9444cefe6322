"""Reviewing episodes as a run writes them: each episode's verdict goes into its record.

A :class:`~todeval.review.Reviewer` reads a whole run (``review(manifest, records)``, one
:class:`~todeval.review.Review` per record, in order). :class:`LiveReview` feeds it one record at
a time instead, so whatever it sets up once per run (the task set, a rule provider) is set up
once, and the runner writes each episode with ``review`` (verdict and faults; ``none`` for a
success, whose simulator faults still count in the fault rate) and each failed one with the
label ``who_failed`` too (counted in the summary like any label). Runs written before successes
were reviewed (their successes carry no ``review``) are read by :class:`RunReviews`, which has
the reviewer review only the records without one.

A reviewer that fails (a task it cannot find, a bug) never costs the run an episode: reviewing
stops, and :attr:`LiveReview.stopped` says why (the runner prints it as a note).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, EpisodeReview, Manifest
from todeval.errors import TodevalError
from todeval.review import Review, Reviewer, Tally, tally

WHO_FAILED = "who_failed"
"""The record label holding a failed episode's verdict."""


class _Feed:
    """An iterator that yields the one record put in it (the reviewer pulls it)."""

    def __init__(self) -> None:
        self.record: EpisodeRecord | None = None

    def __iter__(self) -> Iterator[EpisodeRecord]:
        return self

    def __next__(self) -> EpisodeRecord:
        record, self.record = self.record, None
        if record is None:
            raise StopIteration
        return record


class LiveReview:
    """The run's reviewer, one record at a time (see the module's docstring)."""

    def __init__(self, reviewer: Reviewer, manifest: Manifest) -> None:
        self._feed = _Feed()
        self._reviews = reviewer.review(manifest, self._feed)
        self.stopped: str | None = None

    def __call__(self, record: EpisodeRecord) -> EpisodeRecord:
        """``record`` with its review, and its verdict as a label if it failed (an
        infrastructure error, which is re-run rather than scored, unchanged)."""
        if self.stopped is not None or record.outcome is Outcome.INFRASTRUCTURE_ERROR:
            return record
        self._feed.record = record
        try:
            review: Review = next(self._reviews)
        except StopIteration:
            self.stopped = "the reviewer stopped early"
            return record
        except Exception as exc:  # a reviewer's failure never loses the episode
            self.stopped = f"{type(exc).__name__}: {exc}".splitlines()[0]
            return record
        if review.episode_id != record.episode_id:
            self.stopped = f"the reviewer answered {review.episode_id} for {record.episode_id}"
            return record
        written = EpisodeReview(verdict=review.verdict, faults=review.faults)
        if record.outcome is Outcome.SUCCESS:
            return record.model_copy(update={"review": written})
        return record.model_copy(
            update={"review": written, "labels": {**record.labels, WHO_FAILED: review.verdict}}
        )


class RunReviews:
    """One run's reviews gathered as its records are read once (``offer`` each, in file
    order): a record's stored review is taken as it is; the reviewer reviews only the records
    without one, fed one at a time (set up on the first such record, never when all have one).

    Infrastructure errors are not reviewed (they are re-run, not scored). The outcome:

    * :attr:`counts`, the reviews of the reviewable records as a :data:`~todeval.review.Tally`
      (what :func:`~todeval.review.summarise` reads: memory does not grow with the run);
    * :attr:`unreadable`: the reviewer could not read the run (a task it does not ship: its
      one-line error), so there is no review of it;
    * :attr:`needs_rereading`: the reviewer did not answer one record at a time (it stopped
      early, or answered another episode): review the run whole instead
      (:func:`todeval.review.reading.review_with`).
    """

    def __init__(self, reviewer: Reviewer, manifest: Manifest) -> None:
        self.reviewer = reviewer
        self._manifest = manifest
        self._feed: _Feed | None = None
        self._reviews: Iterator[Review] | None = None
        self.counts: Tally = Counter()
        self.reviewed = 0
        """Records the reviewer read (those without a stored review)."""
        self.unreadable: str | None = None
        self.needs_rereading = False

    @property
    def done(self) -> bool:
        """Nothing more to gather (the reviewer failed or did not stream)."""
        return self.unreadable is not None or self.needs_rereading

    def offer(self, record: EpisodeRecord) -> None:
        if self.done or record.outcome is Outcome.INFRASTRUCTURE_ERROR:
            return
        if record.review is not None:
            faults = record.review.faults
            self.counts[record.review.verdict, frozenset((f.side, f.kind) for f in faults)] += 1
            return
        if self._feed is None or self._reviews is None:
            self._feed = _Feed()
            self._reviews = self.reviewer.review(self._manifest, self._feed)
        self._feed.record = record
        self.reviewed += 1
        try:
            review = next(self._reviews)
        except StopIteration:
            self.needs_rereading = True
            return
        except TodevalError as exc:
            self.unreadable = exc.message
            return
        if review.episode_id != record.episode_id:
            self.needs_rereading = True
            return
        self.counts.update(tally([review]))


__all__ = ["WHO_FAILED", "LiveReview", "RunReviews"]
