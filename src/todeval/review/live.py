"""Reviewing episodes as a run writes them: each failed episode's verdict goes into its record.

A :class:`~todeval.review.Reviewer` reads a whole run (``review(manifest, records)``, one
:class:`~todeval.review.Review` per record, in order). :class:`LiveReview` feeds it one record at
a time instead, so whatever it sets up once per run (the task set, a rule provider) is set up
once, and the runner writes each failed episode with ``review`` (verdict and faults) and the
label ``who_failed`` (counted in the summary like any label). A successful episode is written as
it is: ``todeval review RUN_DIR`` re-reads every episode, old runs included, when the simulator's
faults in successes are wanted too.

A reviewer that fails (a task it cannot find, a bug) never costs the run an episode: reviewing
stops, and :attr:`LiveReview.stopped` says why (the runner prints it as a note).
"""

from __future__ import annotations

from collections.abc import Iterator

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, EpisodeReview, Manifest
from todeval.review import Review, Reviewer

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
        """``record`` with its review if it failed (else unchanged)."""
        if self.stopped is not None or record.outcome in (
            Outcome.SUCCESS,
            Outcome.INFRASTRUCTURE_ERROR,
        ):
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
        return record.model_copy(
            update={
                "review": EpisodeReview(verdict=review.verdict, faults=review.faults),
                "labels": {**record.labels, WHO_FAILED: review.verdict},
            }
        )


__all__ = ["WHO_FAILED", "LiveReview"]
