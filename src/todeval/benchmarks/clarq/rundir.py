"""Self-play episodes as scorer records: the reader behind ``todeval score clarq RUN_DIR`` and
the corpus summary of ``todeval run clarq``.

An episode's transcript is its ``provider_message`` and ``seeker_message`` events in order
(greeting first); its release record is ``details['released']`` (the labels the game master
released); the judge verdicts it obtained from a model are ``details['verdicts']``. The gold
and purposes come from the shipped task of the episode's id. An episode that ended in a seeker
or provider error has no scored dialogue (the scorer's missing-transcript rule); episodes with
an infrastructure error are left out (the runner re-runs them; the summary counts them in
``excluded``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from todeval.benchmarks.clarq._judge import VerdictEntry
from todeval.benchmarks.clarq._original import TranscriptFile
from todeval.benchmarks.clarq._tasks import ClarqTask, load_tasks
from todeval.benchmarks.clarq._transcripts import ClarqTranscript
from todeval.benchmarks.clarq.game import BENCHMARK, transcript
from todeval.core.records import EpisodeRecord, Manifest
from todeval.errors import BadInputError
from todeval.runner.store import RunDirectory

MESSAGE_KINDS = ("provider_message", "seeker_message")
SCORED = ("done", "turn_cap")
"""Terminations that leave a dialogue to score (a goodbye, the message cap)."""


def episode_messages(record: EpisodeRecord) -> list[str]:
    """The transcript: greeting, then seeker and provider alternating."""
    return [str(e.data.get("text", "")) for e in record.events if e.kind in MESSAGE_KINDS]


def record_transcript(record: EpisodeRecord, task: ClarqTask) -> ClarqTranscript:
    """What the scorer reads of one episode."""
    scored = record.termination in SCORED
    released = [str(label) for label in record.details.get("released", [])]
    messages = episode_messages(record) if scored else None
    return transcript(task, messages, released, trial=record.trial)


def episode_verdicts(records: Iterable[EpisodeRecord]) -> dict[str, VerdictEntry]:
    """The judge verdicts the episodes recorded, by key (a layer of a verdict store)."""
    out: dict[str, VerdictEntry] = {}
    for record in records:
        for raw in record.details.get("verdicts", []):
            try:
                entry = VerdictEntry.model_validate(raw)
            except ValidationError:
                continue
            out[entry.key] = entry
    return out


def scored_transcripts(
    records: Sequence[EpisodeRecord], tasks: dict[str, ClarqTask]
) -> list[ClarqTranscript]:
    """The scorer records of the episodes that count, in task order, then trial."""
    order = {task_id: i for i, task_id in enumerate(tasks)}
    kept = [r for r in records if r.outcome.counts_in_metrics and r.task_id in tasks]
    kept.sort(key=lambda r: (order[r.task_id], r.trial))
    return [record_transcript(r, tasks[r.task_id]) for r in kept]


class RunTranscripts(TranscriptFile):
    """A run directory read as scorer records, with the verdicts its episodes recorded."""

    verdicts: dict[str, VerdictEntry]
    judge_model: str | None = None
    protocol: str | None = None


def read_run(path: Path) -> RunTranscripts:
    """A ``todeval run clarq`` directory as scorer records (:class:`BadInputError` if it is not
    one)."""
    store = RunDirectory(path)
    if not store.exists():
        raise BadInputError(f"{path}: not a run directory (no manifest.json)")
    manifest: Manifest = store.read_manifest()
    if manifest.benchmark != BENCHMARK:
        raise BadInputError(f"{path}: a {manifest.benchmark} run, not a clarq run")
    config = manifest.config
    lang, split = config.get("lang"), config.get("task_set")
    if lang not in ("en", "zh") or split not in ("test", "dev"):
        raise BadInputError(f"{path}: the manifest names no ClarQ language and split")
    tasks = {t.task_id: t for t in load_tasks(lang, split)}
    records = list(store.iter_episodes())
    unknown = sorted({r.task_id for r in records} - set(tasks))
    if unknown:
        raise BadInputError(f"{path}: episode of unknown task {unknown[0]!r}")
    warnings: list[str] = []
    excluded = sum(not r.outcome.counts_in_metrics for r in records)
    if excluded:
        warnings.append(f"{excluded} episodes with an infrastructure error are left out")
    expected = manifest.n_tasks * int(config.get("trials", 1))
    counted = len(records) - excluded
    if counted < expected:
        warnings.append(f"{counted} of {expected} episodes are scored: the run is incomplete")
    return RunTranscripts(
        source=str(path),
        format="todeval-run",
        language=lang,
        records=scored_transcripts(records, tasks),
        warnings=warnings,
        verdicts=episode_verdicts(records),
        judge_model=config.get("judge_model"),
        protocol=manifest.protocol,
    )


def is_run_directory(path: Path) -> bool:
    return path.is_dir() and RunDirectory(path).exists()


__all__ = [
    "MESSAGE_KINDS",
    "SCORED",
    "RunTranscripts",
    "episode_messages",
    "episode_verdicts",
    "is_run_directory",
    "read_run",
    "record_transcript",
    "scored_transcripts",
]
