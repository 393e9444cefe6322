"""Reading runs for a review without the plug-in registry: the run's records, and the reviewer a
profile names (so panels and the report reach it with no import of the registry)."""

from __future__ import annotations

from pathlib import Path

from todeval.core.imports import load_reference
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Manifest
from todeval.errors import BadInputError
from todeval.review import Review, Reviewer


def read_run(path: Path) -> tuple[Manifest, list[EpisodeRecord]]:
    """The manifest and the reviewable records (infrastructure errors left out) of a run."""
    from todeval.runner.store import RunDirectory

    store = RunDirectory(path)
    if not store.exists():
        raise BadInputError(f"{path}: not a run directory (no manifest.json)")
    manifest = store.read_manifest()
    records = [r for r in store.iter_episodes() if r.outcome is not Outcome.INFRASTRUCTURE_ERROR]
    if not records:
        raise BadInputError(f"{path}: no finished episodes to review (episodes.jsonl)")
    return manifest, records


def load_reviewer(reference: str) -> Reviewer:
    """The :class:`Reviewer` a profile's ``reviewer`` reference names."""
    found = load_reference(reference, what="reviewer")
    if not isinstance(found, Reviewer):
        raise TypeError(f"{reference} is not a todeval.review.Reviewer")
    return found


def review_with(reviewer: Reviewer, path: Path) -> list[Review]:
    """Every reviewable episode of the run directory ``path``, reviewed by ``reviewer``."""
    manifest, records = read_run(path)
    return list(reviewer.review(manifest, records))


__all__ = ["load_reviewer", "read_run", "review_with"]
