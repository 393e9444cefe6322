"""Benchmark-neutral building blocks: outcomes, records, RNG derivation."""

from todeval.core.outcome import Outcome
from todeval.core.records import (
    SCHEMA_VERSION,
    CallUsage,
    EpisodeRecord,
    Estimate,
    Event,
    Manifest,
    MetricSummary,
    RoleUsage,
    Session,
    Summary,
    Timing,
)
from todeval.core.rng import derive_seed, episode_rng

__all__ = [
    "SCHEMA_VERSION",
    "CallUsage",
    "EpisodeRecord",
    "Estimate",
    "Event",
    "Manifest",
    "MetricSummary",
    "Outcome",
    "RoleUsage",
    "Session",
    "Summary",
    "Timing",
    "derive_seed",
    "episode_rng",
]
