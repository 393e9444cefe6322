"""Scorer versions and re-grading: a stored run scored again by the installed scorer.

Every benchmark declares the version of its scoring (``BenchmarkSpec.scorer_version``) and,
where its scoring can be recomputed from a stored episode, how (``BenchmarkSpec.rescore``).
Records and summaries carry the version that scored them (``None``: a run written before
scorer versions, shown as ``unrecorded``).

Entry points (``todeval rescore`` and ``todeval submit verify`` build on them):

* :func:`recompute` -- a run directory's records and summary under the installed scorer,
  nothing written: ``Recomputed.old`` (as stored), ``Recomputed.records`` (re-scored, same
  order), ``Recomputed.summary``, the versions before and after;
* :func:`metric_changes` -- per metric, the old and new means, the paired difference with its
  bootstrap CI over tasks and the episodes whose value changed (flips);
* :func:`rescore_run` -- :func:`recompute`, then written to ``out`` (a copy of the run) or,
  with ``in_place=True``, over the run itself; never both, and never in place unasked;
* :func:`run_scorer_version` and :func:`refuse_mixed_versions` -- the check ``compare``,
  ``report`` and ``view`` make before putting runs side by side.

This layer names no benchmark: it finds the spec through the registry by the manifest's
benchmark name.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from todeval.core.imports import load_reference
from todeval.core.records import EpisodeRecord, Manifest, Summary
from todeval.errors import BadInputError, RefusedError, UsageError
from todeval.runner.options import RuntimeOptions
from todeval.runner.store import EPISODES, SUMMARY, RunDirectory

WHO_FAILED = "who_failed"
"""The label the runner's review writes on a failed episode (:mod:`todeval.review.live`): kept
by re-grading while the episode still failed, dropped when the new scorer says it succeeded."""

UNRECORDED = "unrecorded"
"""How a run written before scorer versions shows its version."""


def shown_version(version: str | None) -> str:
    return UNRECORDED if version is None else version


def load_spec(benchmark: str) -> Any:
    """The registered :class:`~todeval.spec.BenchmarkSpec` of ``benchmark`` (built-in or
    plug-in); an unknown name is bad input (the run names a benchmark not installed)."""
    from todeval.registry import discover

    entries = discover().benchmarks
    if benchmark not in entries:
        raise BadInputError(f"benchmark {benchmark!r} is not installed (installed: "
                            f"{', '.join(sorted(entries))})")  # fmt: skip
    return load_reference(entries[benchmark].spec, what="benchmark spec")


def installed_scorer_version(benchmark: str) -> str | None:
    """The scorer version the installed ``benchmark`` declares (``None``: not installed)."""
    try:
        spec = load_spec(benchmark)
    except BadInputError:
        return None
    version = getattr(spec, "scorer_version", None)
    return version if isinstance(version, str) else None


@dataclass
class Recomputed:
    """A run scored again (nothing written): see :func:`recompute`."""

    path: Path
    manifest: Manifest
    old: list[EpisodeRecord]
    """The records as stored, in file order."""
    records: list[EpisodeRecord]
    """The same records re-scored (same order): metrics, labels, outcome, scorer version."""
    summary: Summary
    old_summary: Summary | None
    old_versions: list[str | None]
    """The distinct versions the stored records carry (``None``: unrecorded)."""
    version: str
    """The installed scorer's version, now on every record and the summary."""

    @property
    def benchmark(self) -> str:
        return self.manifest.benchmark


def rescore_record(spec: Any, context: Any, record: EpisodeRecord) -> EpisodeRecord:
    """``record`` scored again by ``spec.rescore`` in ``context``
    (:func:`todeval.spec.scoring_context`). An episode that does not count in metrics (an
    infrastructure error) keeps its metrics; every record gets the installed version. The
    review's ``who_failed`` label is kept while the episode still fails."""
    version: str = spec.scorer_version
    if not record.outcome.counts_in_metrics:
        return record.model_copy(update={"scorer_version": version})
    task = context.tasks.get(record.task_id)
    if task is None:
        raise BadInputError(
            f"episode {record.episode_id}: task {record.task_id!r} is not in the installed "
            f"{record.benchmark} task set"
        )
    again = spec.rescore(context, task, record)
    bad = [name for name, value in again.metrics.items() if not math.isfinite(value)]
    if bad:  # a benchmark's rescore bug: a record never holds one (core.records.FiniteFloat)
        raise ValueError(f"episode {record.episode_id}: rescore gave {bad[0]} a non-finite value")
    labels = dict(again.labels)
    outcome = again.outcome or record.outcome
    verdict = record.labels.get(WHO_FAILED)
    if verdict is not None and outcome.value != "success":  # the review's, not the scorer's
        labels[WHO_FAILED] = verdict
    update: dict[str, Any] = {
        "metrics": dict(again.metrics),
        "labels": labels,
        "scorer_version": version,
    }
    if again.details:
        update["details"] = {**record.details, **again.details}
    reason = again.reason if again.reason is not None else record.reason
    if outcome is not record.outcome or reason != record.reason:
        update["outcome"] = outcome
        update["reason"] = reason
        update["events"] = _settled_events(record, outcome.value, reason)
    return record.model_copy(update=update)


def _settled_events(record: EpisodeRecord, outcome: str, reason: str) -> list[Any]:
    """The record's events with its last ``episode_end`` saying ``outcome`` and ``reason``
    (how the dialogue itself ended kept beside them), as the episode log settles it when a
    record is built."""
    events = list(record.events)
    for i in range(len(events) - 1, -1, -1):
        event = events[i]
        if event.kind != "episode_end":
            continue
        said = event.data
        data = {
            **said,
            "outcome": outcome,
            "reason": reason,
            "dialogue_outcome": said.get("dialogue_outcome", said.get("outcome")),
            "dialogue_reason": said.get("dialogue_reason", said.get("reason")),
        }
        events[i] = event.model_copy(update={"data": data})
        break
    return events


def recompute(
    run_dir: str | Path, *, workdir: Path | None = None, runtime: RuntimeOptions | None = None
) -> Recomputed:
    """Score every record of the run in ``run_dir`` again under the installed scorer and
    rebuild its summary; the run itself is never touched.

    What a benchmark writes while summarising (a prediction file, a key file) goes to
    ``workdir``, which should hold a copy of the run's other files (:func:`copy_run_files`);
    ``None``: a temporary copy, discarded. ``Recomputed.records`` and ``.summary`` are what a
    re-graded run holds; nothing else is written.

    Raises :class:`~todeval.errors.BadInputError` for a path that is not a run directory or a
    benchmark not installed, and :class:`~todeval.errors.RefusedError` for a benchmark whose
    scoring cannot be recomputed from its records (its spec declares no ``rescore``)."""
    path = Path(run_dir)
    store = RunDirectory(path)
    if not path.is_dir() or not store.exists():
        raise BadInputError(f"{path}: not a run directory (no manifest.json)")
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="todeval-rescore-") as tmp:
            work = Path(tmp) / path.resolve().name
            copy_run_files(path, work)
            return recompute(path, workdir=work, runtime=runtime)
    from todeval.spec import close_scoring_context, scoring_context

    manifest = store.read_manifest()
    spec = load_spec(manifest.benchmark)
    if getattr(spec, "rescore", None) is None:
        raise RefusedError(
            f"{path}: {manifest.benchmark} declares no rescore: its scoring cannot be "
            "recomputed from the stored episodes"
        )
    old = list(store.iter_episodes())
    if not old:
        raise BadInputError(f"{store.episodes_path}: the run has no episodes")
    runtime = runtime or RuntimeOptions(out=workdir, cache=False)
    context = scoring_context(spec, manifest.config, runtime)
    try:
        records = [rescore_record(spec, context, r) for r in old]
        summary = summarize_records(spec, context, manifest, records)
    finally:
        close_scoring_context(context)
    versions = list(dict.fromkeys(r.scorer_version for r in old))
    return Recomputed(
        path=path,
        manifest=manifest,
        old=old,
        records=records,
        summary=summary,
        old_summary=store.read_summary(),
        old_versions=versions,
        version=spec.scorer_version,
    )


def copy_run_files(source: Path, target: Path) -> None:
    """Copy the run in ``source`` to ``target`` but for its records, summary and lock."""
    from todeval.core.lock import RUN_LOCK

    try:
        shutil.copytree(
            source,
            target,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(EPISODES, SUMMARY, RUN_LOCK),
        )
    except OSError as exc:
        raise BadInputError(f"{target}: cannot copy the run there ({exc})") from None


def summarize_records(
    spec: Any, context: Any, manifest: Manifest, records: Iterable[EpisodeRecord]
) -> Summary:
    """The summary of ``records`` as the run's end writes it: the spec's ``finalize``, or the
    runner's summary; the manifest's protocol and the installed scorer version added."""
    from todeval.runner.summary import summarize

    if spec.finalize is not None:
        summary: Summary = spec.finalize(context, list(records))
    else:
        profile = getattr(spec, "profile", None)
        summary = summarize(
            manifest.benchmark,
            records,
            seed=manifest.seed,
            grouped=spec.tasks.grouped_jobs,
            success_metric=spec.success_metric
            or (profile.success_metric if profile is not None else None),
        )
    update: dict[str, Any] = {"scorer_version": spec.scorer_version}
    if manifest.protocol is not None:
        update["protocol"] = manifest.protocol
    return summary.model_copy(update=update)


@dataclass
class MetricChange:
    """One metric before and after re-grading, over the episodes scored both times."""

    metric: str
    n: int
    """Episodes with the metric both times."""
    old: float | None
    new: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    changed: list[str] = field(default_factory=list)
    """Ids of the episodes whose value changed."""
    up: int = 0
    """Of them, how many went up (a 0/1 metric: flipped 0 -> 1)."""
    down: int = 0
    only_old: int = 0
    """Episodes that had the metric only before (dropped by the new scorer)."""
    only_new: int = 0


@dataclass
class LabelChange:
    label: str
    changed: list[str] = field(default_factory=list)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def metric_changes(
    old: Sequence[EpisodeRecord],
    new: Sequence[EpisodeRecord],
    *,
    seed: int = 0,
    resamples: int = 2000,
) -> list[MetricChange]:
    """Per metric: means before and after over the episodes that have it both times, the
    difference (new - old) with a paired percentile bootstrap CI over tasks (a task's trials
    averaged), and the episodes whose value changed. Episodes are paired by id; those that do
    not count in metrics are left out."""
    from todeval.stats.paired import paired_bootstrap

    before = {r.episode_id: r for r in old if r.outcome.counts_in_metrics}
    after = {r.episode_id: r for r in new if r.outcome.counts_in_metrics}
    names = sorted({m for r in (*before.values(), *after.values()) for m in r.metrics})
    out = []
    for name in names:
        change = MetricChange(name, 0, None, None, None, None, None)
        pairs: dict[str, list[tuple[float, float]]] = {}
        olds, news = [], []
        for eid, a in before.items():
            b = after.get(eid)
            va = a.metrics.get(name)
            vb = b.metrics.get(name) if b is not None else None
            if va is None and vb is None:
                continue
            if vb is None:
                change.only_old += 1
                continue
            if va is None:
                change.only_new += 1
                continue
            olds.append(va)
            news.append(vb)
            pairs.setdefault(a.task_id, []).append((va, vb))
            if va != vb:
                change.changed.append(eid)
                change.up += int(vb > va)
                change.down += int(vb < va)
        change.only_new += sum(1 for e, b in after.items() if e not in before and name in b.metrics)
        change.n = len(olds)
        change.old, change.new = _mean(olds), _mean(news)
        if change.old is not None and change.new is not None:
            change.diff = change.new - change.old
            tasks = sorted(pairs)
            a_means = [sum(p[0] for p in pairs[t]) / len(pairs[t]) for t in tasks]
            b_means = [sum(p[1] for p in pairs[t]) / len(pairs[t]) for t in tasks]
            if change.changed and len(tasks) > 1:
                paired = paired_bootstrap(
                    a_means, b_means, seed=seed, label=name, resamples=resamples
                )
                change.ci_low, change.ci_high = paired.ci_low, paired.ci_high
            else:  # nothing moved (or one task): the difference is exact
                change.ci_low = change.ci_high = change.diff
        out.append(change)
    return out


def label_changes(old: Sequence[EpisodeRecord], new: Sequence[EpisodeRecord]) -> list[LabelChange]:
    """Per label, the episodes whose value changed (appeared, went or differs)."""
    after = {r.episode_id: r for r in new}
    names = sorted({k for r in (*old, *new) for k in r.labels})
    out = []
    for name in names:
        changed = [
            r.episode_id
            for r in old
            if r.episode_id in after and r.labels.get(name) != after[r.episode_id].labels.get(name)
        ]
        out.append(LabelChange(name, changed))
    return out


def outcome_changes(old: Sequence[EpisodeRecord], new: Sequence[EpisodeRecord]) -> list[str]:
    """Ids of the episodes whose outcome the new scorer changed."""
    after = {r.episode_id: r for r in new}
    return [
        r.episode_id
        for r in old
        if r.episode_id in after and after[r.episode_id].outcome is not r.outcome
    ]


@dataclass
class SummaryChange:
    """A run-level figure of the summary (a corpus score, pass^k) before and after."""

    metric: str
    old: float | None
    new: float | None
    ci_low: float | None = None
    """The new figure's interval, as the summary gives it."""
    ci_high: float | None = None

    @property
    def diff(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old


def summary_changes(
    old: Summary | None, new: Summary, per_episode: Iterable[str] = ()
) -> list[SummaryChange]:
    """The summary's figures that are not one episode's metric (those are in
    :func:`metric_changes`), before (``old``: the stored summary) and after."""
    skip = set(per_episode)
    before = old.metrics if old is not None else {}
    names = sorted((set(before) | set(new.metrics)) - skip)
    out = []
    for name in names:
        a, b = before.get(name), new.metrics.get(name)
        out.append(
            SummaryChange(
                name,
                a.micro.value if a is not None else None,
                b.micro.value if b is not None else None,
                b.micro.ci_low if b is not None else None,
                b.micro.ci_high if b is not None else None,
            )
        )
    return out


@dataclass
class RescoreResult:
    """What :func:`rescore_run` did: the recomputation, its changes and where it wrote."""

    recomputed: Recomputed
    metrics: list[MetricChange]
    labels: list[LabelChange]
    outcomes: list[str]
    written: Path | None
    summary: list[SummaryChange] = field(default_factory=list)


def rescore_run(
    run_dir: str | Path,
    *,
    out: str | Path | None = None,
    in_place: bool = False,
    resamples: int = 2000,
) -> RescoreResult:
    """Re-grade the run in ``run_dir`` (:func:`recompute`) and report what changed; write the
    re-graded run to ``out`` (a new directory: the run's other files copied, its records and
    summary re-scored) or, with ``in_place``, over ``run_dir`` itself (its records and
    summary replaced atomically); with neither, nothing is written."""
    if out is not None and in_place:
        raise UsageError("rescore: --out and --in-place exclude each other")
    source = Path(run_dir)
    target = Path(out) if out is not None else (source if in_place else None)
    if target is not None and not in_place:
        if target.resolve() == source.resolve():
            raise UsageError(f"{target}: --out is the run itself; use --in-place to rewrite it")
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise RefusedError(f"{target}: already exists and is not empty; choose a new --out")
    if in_place:
        from todeval.core.lock import RUN_LOCK, hold

        with (  # a run still writing its episodes is refused, not rewritten under it
            hold(source / RUN_LOCK, f"run directory {source}"),
            tempfile.TemporaryDirectory(prefix="todeval-rescore-") as tmp,
        ):
            work = Path(tmp) / "run"
            copy_run_files(source, work)
            recomputed = recompute(source, workdir=work)
            # what the benchmark wrote while summarising (predictions, keys) goes back too
            copy_run_files(work, source)
            write_rescored(recomputed, source)
    elif target is not None:
        copy_run_files(source, target)
        recomputed = recompute(source, workdir=target)
        write_rescored(recomputed, target)
    else:
        recomputed = recompute(source)
    return RescoreResult(
        recomputed,
        metric_changes(recomputed.old, recomputed.records, seed=recomputed.manifest.seed,
                       resamples=resamples),
        label_changes(recomputed.old, recomputed.records),
        outcome_changes(recomputed.old, recomputed.records),
        target,
        summary_changes(recomputed.old_summary, recomputed.summary,
                        {m for r in (*recomputed.old, *recomputed.records) for m in r.metrics}),
    )  # fmt: skip


def write_rescored(recomputed: Recomputed, target: Path) -> None:
    """Write the re-scored records and summary into the run directory ``target``, each file
    replaced atomically (a reader sees the old file or the new, never half of one)."""
    from todeval.core.records import contradictions
    from todeval.runner.store import write_json_atomic

    for record in recomputed.records:
        disagree = contradictions(record)
        if disagree:  # a benchmark's rescore bug: never write a record that contradicts itself
            raise ValueError(f"episode {record.episode_id} contradicts itself: {disagree[0]}")
    store = RunDirectory(target)
    tmp = target / f".{EPISODES}.rescore"
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for record in recomputed.records:
                line = record.model_dump_json()
                json.loads(line)
                fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, store.episodes_path)
    except OSError as exc:
        raise BadInputError(f"{target}: cannot write the re-scored run ({exc})") from None
    write_json_atomic(store.summary_path, recomputed.summary)


def run_scorer_version(path: Path, summary: Summary | None = None) -> str | None:
    """The scorer version of the run in ``path``: its summary's (``summary``: the one already
    read), else its first record's, read from the first line alone (``None``: unrecorded, a run
    written before scorer versions)."""
    store = RunDirectory(path)
    if summary is None:
        summary = store.read_summary()
    if summary is not None and summary.scorer_version is not None:
        return summary.scorer_version
    try:
        with store.episodes_path.open("rb") as fh:
            first = fh.readline(MAX_FIRST_LINE)
        version = json.loads(first).get("scorer_version") if first.strip() else None
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


MAX_FIRST_LINE = 64 * 1024 * 1024
"""The most of a run's first episode line read to find its scorer version."""


def runs_under(root: Path) -> list[Path]:
    """The run directories under ``root`` (a directory holding ``manifest.json``; hidden
    directories and a run's own sub-directories are not searched)."""
    out = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if "manifest.json" in files:
            dirs[:] = []
            out.append(Path(here))
    return out


def refuse_mixed_runs(paths: Iterable[Path], names: Sequence[str] | None = None) -> None:
    """:func:`refuse_mixed_versions` over run directories (their manifests and summaries; an
    unreadable run is left to the caller's own reading to report)."""
    from todeval.errors import TodevalError

    found: list[tuple[str, str, str | None]] = []
    for i, path in enumerate(paths):
        try:
            manifest = RunDirectory(path).read_manifest()
        except TodevalError:
            continue
        name = names[i] if names is not None else str(path)
        found.append((name, manifest.benchmark, run_scorer_version(path)))
    refuse_mixed_versions(found)


def refuse_mixed_versions(runs: Sequence[tuple[str, str, str | None]]) -> None:
    """Refuse (exit 4) to put side by side runs of one benchmark scored by different scorer
    versions; ``runs`` are (name shown, benchmark, version). A run whose version is unrecorded
    (written before scorer versions) is not refused: nothing says which scorer it had."""
    first: dict[str, tuple[str, str]] = {}
    for name, benchmark, version in runs:
        if version is None:
            continue
        seen = first.setdefault(benchmark, (name, version))
        if seen[1] != version:
            installed = shown_version(installed_scorer_version(benchmark))
            raise RefusedError(
                f"{seen[0]} was scored by {benchmark} scorer {seen[1]}, {name} by scorer "
                f"{version}: their scores are not comparable side by side; re-grade under the "
                f"installed scorer ({installed}) with todeval rescore RUN_DIR --out DIR"
            )
