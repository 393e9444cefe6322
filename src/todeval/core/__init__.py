"""Benchmark-neutral building blocks: outcomes, records, RNG derivation.

The names below are imported on first use (module ``__getattr__``): the command line imports
light modules of this package (``todeval.core.redact``, ``todeval.core.safejson``) at start-up,
and importing the package must not build the pydantic record models then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers; at run time see __getattr__
    from todeval.core.events import Event
    from todeval.core.outcome import Outcome
    from todeval.core.records import (
        SCHEMA_VERSION,
        CallUsage,
        EpisodeRecord,
        Estimate,
        Manifest,
        MetricSummary,
        RoleUsage,
        Session,
        Summary,
        Timing,
    )
    from todeval.core.rng import derive_seed, episode_rng

_EXPORTS = {
    "Outcome": "outcome",
    "SCHEMA_VERSION": "records",
    "CallUsage": "records",
    "EpisodeRecord": "records",
    "Estimate": "records",
    "Event": "events",
    "Manifest": "records",
    "MetricSummary": "records",
    "RoleUsage": "records",
    "Session": "records",
    "Summary": "records",
    "Timing": "records",
    "derive_seed": "rng",
    "episode_rng": "rng",
}


__getattr__ = lazy_attributes(globals(), _EXPORTS, relative=True)


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
