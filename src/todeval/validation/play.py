"""Playing one agent of an adversary family as an ordinary run of its benchmark.

Kept apart from :mod:`todeval.validation.search` (which the suite declarations import) because
it imports the Python API, which imports everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.core.records import Summary
from todeval.validation.search import AdversaryJob, point_slug


def play_run(job: AdversaryJob, config: Mapping[str, Any]) -> Summary:
    """Play ``config`` as a run of ``job.benchmark`` quietly into a fresh directory under
    ``job.workdir``, with the job's seed, limit and concurrency; the run's summary. A family's
    ``play`` usually ends with this."""
    from todeval import api

    where = job.workdir / point_slug(job.params)
    run_config: dict[str, Any] = {"seed": job.seed, **dict(config)}
    if job.limit is not None:
        run_config.setdefault("limit", job.limit)
    result = api.run(
        job.benchmark,
        run_config,
        out=where,
        max_concurrency=job.max_concurrency,
        quiet=True,
        review=False,  # an adversary fails by design: whose fault is not the question
    )
    return result.summary


def play_seat(job: AdversaryJob) -> Summary:
    """A point of a family that names ``seat`` and ``player``: a default run of the benchmark
    with the player, the point's parameters on its name (``NAME?key=value``), in the seat."""
    from todeval.dialogue.participants import with_params

    family = job.family
    if family.seat is None or family.player is None:
        raise ValueError(f"family {family.name!r} names no seat and player")
    return play_run(job, {family.seat: with_params(family.player, job.params)})


__all__ = ["play_run", "play_seat"]
