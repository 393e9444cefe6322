"""Read run directories into per-task metric values for comparisons."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from todeval.core.records import Manifest, Summary
from todeval.errors import BadInputError
from todeval.runner.store import RunDirectory


@dataclass
class LoadedRun:
    """A run's manifest, optional summary and metric values per task (scored episodes only)."""

    path: Path
    manifest: Manifest
    summary: Summary | None
    # metric -> task -> values ordered by trial
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    tasks: set[str] = field(default_factory=set)
    n_episodes: int = 0
    n_excluded: int = 0
    max_trials: int = 0

    @property
    def task_set(self) -> str | None:
        """The task set the run drew from, as its manifest's selection records it."""
        return self.manifest.selection.task_set


def load_run(path: Path) -> LoadedRun:
    """Read a run directory; episodes that do not count in metrics are left out and counted.

    Raises :class:`BadInputError` (one line) for a missing directory, a missing or malformed
    manifest, a malformed episode line, or a run without episodes.
    """
    if not path.is_dir():
        raise BadInputError(f"{path}: no such run directory")
    store = RunDirectory(path)
    if not store.exists():
        raise BadInputError(f"{path}: not a run directory (no manifest.json)")
    manifest = store.read_manifest()
    run = LoadedRun(path=path, manifest=manifest, summary=store.read_summary())
    per_metric: dict[str, dict[str, list[tuple[int, float]]]] = {}
    trials: dict[str, int] = {}
    seen = 0
    for record in store.iter_episodes(light=True):
        seen += 1
        if not record.outcome.counts_in_metrics:
            run.n_excluded += 1
            continue
        run.n_episodes += 1
        run.tasks.add(record.task_id)
        trials[record.task_id] = trials.get(record.task_id, 0) + 1
        for name, value in record.metrics.items():
            per_metric.setdefault(name, {}).setdefault(record.task_id, []).append(
                (record.trial, value)
            )
    if seen == 0:
        raise BadInputError(f"{store.episodes_path}: the run has no episodes")
    run.values = {
        name: {t: [v for _, v in sorted(pairs)] for t, pairs in sorted(by_task.items())}
        for name, by_task in sorted(per_metric.items())
    }
    run.max_trials = max(trials.values(), default=0)
    return run
