"""What a run is: its episode jobs and the plan a benchmark hands the runner.

Kept apart from :mod:`todeval.runner.execute` (which runs a plan) so that the executors, which
play a plan's jobs, need not import the module that drives them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from todeval.core.identity import RoleIdentity, Selection, legacy_roles, legacy_selection
from todeval.core.records import EpisodeRecord, Summary

if TYPE_CHECKING:
    from todeval.runner.options import RuntimeOptions


@dataclass(frozen=True)
class EpisodeJob:
    task_id: str
    trial: int
    group: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.trial)


@dataclass
class RunPlan:
    benchmark: str
    config: dict[str, Any]
    task_set_hash: str
    n_tasks: int
    seed: int
    jobs: list[EpisodeJob]
    play: Callable[[EpisodeJob], Awaitable[EpisodeRecord]]
    players: dict[str, Any] = field(default_factory=dict)
    # the typed run identity written to the manifest; a plan without it gets one derived from
    # ``players`` and ``config`` by the 0.1.0 conventions (see todeval.core.identity)
    roles: dict[str, RoleIdentity] = field(default_factory=dict)
    selection: Selection | None = None
    protocol: str | None = None
    grouped: bool = True
    # "module:function" rebuilding this plan from ``config`` (Ray workers, the Python API):
    # ``factory(config, runtime=None) -> RunPlan``
    factory: str | None = None
    aclose: Callable[[], Awaitable[None]] | None = None  # release backends at the end
    success_metric: str | None = None
    # Corpus-level benchmarks (BLEU over all turns) summarise the full records themselves;
    # called with the run's episodes (events and details included) instead of ``summarize``.
    finalize: Callable[[Iterable[EpisodeRecord]], Summary] | None = None
    # a person plays a participant in the terminal: one episode at a time, no progress line
    interactive: bool = False
    # how the plan was built (cache settings reach Ray workers, which rebuild the plan)
    runtime: RuntimeOptions | None = None
    # the task-set hashes older versions recorded for the same tasks (their runs resume)
    legacy_task_set_hashes: tuple[str, ...] = ()
    # what the benchmark's spec built for this run (todeval.spec.RunContext: tasks, shared)
    context: Any = None
    # "module:attr" naming the benchmark's todeval.review.Reviewer: failed episodes are
    # written with their verdict (who failed)
    reviewer: str | None = None
    # the version of the benchmark's scoring, written into the summary (the spec's plan also
    # stamps it on every record it plays)
    scorer_version: str | None = None

    @property
    def config_hash(self) -> str:
        return config_hash(self.config)

    def identity(self) -> tuple[dict[str, RoleIdentity], Selection, str | None]:
        """(roles, selection, protocol) as the manifest records them."""
        roles = self.roles or legacy_roles(self.players, self.config)
        selection = self.selection or legacy_selection(self.config, self.n_tasks)
        if selection.n_tasks is None:
            selection = selection.model_copy(update={"n_tasks": self.n_tasks})
        protocol = self.protocol
        if protocol is None and isinstance(self.config.get("protocol"), str):
            protocol = self.config["protocol"]
        return roles, selection, protocol


def config_hash(config: dict[str, Any]) -> str:
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
