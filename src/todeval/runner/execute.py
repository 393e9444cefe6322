"""Run a plan of episodes into a run directory: concurrency, append-on-finish, resume.

The runner knows nothing about any benchmark: a :class:`RunPlan` gives it the jobs (task id,
trial), an async ``play`` function returning an :class:`EpisodeRecord`, and the config whose
hash guards resumes. Re-running into an existing directory continues it: finished episodes are
kept, infrastructure errors are re-run, and the manifest gains a session. A changed config or
task set is refused, and so is a directory holding episodes this run could not have written
(no manifest, another run's seed, a task outside the selection, a newer schema).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from todeval import __version__
from todeval.core.clock import utc_now
from todeval.core.health import (
    RATE_LIMITED_CALLS,
    UNREACHABLE_AFTER_EPISODES,
    RunHealth,
    watching,
)
from todeval.core.lock import RUN_LOCK, hold
from todeval.core.outcome import Outcome
from todeval.core.records import (
    SCHEMA_VERSION,
    EpisodeRecord,
    Manifest,
    Session,
    Summary,
    Timing,
    episode_id,
    without_call_text,
)
from todeval.core.rng import derive_seed
from todeval.errors import (
    EndpointRefusedError,
    InterruptedRunError,
    RefusedError,
    StoppedForRetryError,
    TodevalError,
    UsageError,
)
from todeval.runner.executors import Executor, WorkersLostError, make_executor
from todeval.runner.plan import EpisodeJob, RunPlan
from todeval.runner.progress import ProgressReporter
from todeval.runner.store import RunDirectory
from todeval.runner.summary import summarize

if TYPE_CHECKING:
    from todeval.review.live import LiveReview


@dataclass
class RunResult:
    summary: Summary
    run_dir: Path
    episodes_run: int
    already_complete: bool
    notes: list[str] = field(default_factory=list)
    # episodes that ended in an infrastructure error (re-run by running the same command)
    to_retry: int = 0
    first_cause: str | None = None


def outcome_line(record: EpisodeRecord, metric: str | None) -> str:
    """``=== dialogue ended: success (user said done); <success metric> 1.000 ===``."""
    why = f" ({record.reason})" if record.reason else ""
    value = record.metrics.get(metric) if metric else None
    score = f"; {metric} {value:.3f}" if metric and value is not None else ""
    return f"=== dialogue ended: {record.outcome.value}{why}{score} ==="


def control_notes(manifest: Manifest) -> list[str]:
    """One line per privileged player: the run is a control, never ranked beside agents."""
    return [
        f"note: the {role} player {identity.player!r} is privileged (handed more than the "
        f"{role}'s view): this run is a control, shown apart from the agents under test"
        for role, identity in manifest.roles.items()
        if identity.privileged
    ]


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def _config_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return "; ".join(diffs) if diffs else "config hash differs"


def _check_resume(existing: Manifest, plan: RunPlan, run_dir: Path) -> None:
    if existing.benchmark != plan.benchmark or existing.config_hash != plan.config_hash:
        changes = _config_changes(existing.config, plan.config)
        raise RefusedError(
            f"{run_dir} holds a run with a different config ({changes}); "
            "use another --out directory"
        )
    if existing.task_set_hash not in (plan.task_set_hash, *plan.legacy_task_set_hashes):
        raise RefusedError(
            f"{run_dir} holds a run over a different task set (hash {existing.task_set_hash} != "
            f"{plan.task_set_hash}); use another --out directory"
        )
    moved = [
        f"{role} player ran {before.channel}, now {now.channel}"
        for role, before in existing.roles.items()
        if (now := plan.roles.get(role)) is not None
        and before.channel is not None
        and now.channel is not None
        and before.channel != now.channel
    ]
    if moved:  # the manifest names one channel for every episode: keep it true
        raise RefusedError(
            f"{run_dir} holds a run whose {'; '.join(moved)}; resume it as it was started "
            "(--isolate or not) or use another --out directory"
        )


def _error_record(
    plan: RunPlan, job: EpisodeJob, exc: BaseException, started: str
) -> EpisodeRecord:
    return EpisodeRecord(
        benchmark=plan.benchmark,
        episode_id=episode_id(job.task_id, job.trial),
        task_id=job.task_id,
        trial=job.trial,
        seed=derive_seed(plan.seed, job.task_id, job.trial),
        group=job.group,
        outcome=Outcome.INFRASTRUCTURE_ERROR,
        termination="infrastructure",
        reason=f"{type(exc).__name__}: {exc}",
        timing=Timing(started_at=started, ended_at=utc_now(), duration_s=0.0),
    )


@dataclass
class _SessionState:
    """What this session did: episodes written, and why it stopped early (if it did)."""

    done: int = 0
    stop: TodevalError | None = None
    aborted: int = 0
    first_abort: str | None = None  # the first aborted episode's reason (why, and what not)

    def count(self, record: EpisodeRecord) -> None:
        self.done += 1
        if record.outcome is Outcome.ABORTED:
            self.aborted += 1
            if self.first_abort is None:
                self.first_abort = f"{record.task_id}#{record.trial}: {record.reason}"


class _Interrupted(TodevalError):
    """A signal stopped the session (the message is written once the episodes are counted)."""


class _RateLimited(TodevalError):
    """An endpoint's calls gave up on rate limits (the message is written once the episodes
    are counted)."""

    def __init__(self, endpoint: str, cause: str, answered_before: bool) -> None:
        super().__init__(cause)
        self.endpoint = endpoint
        self.answered_before = answered_before


def _signals_here() -> bool:
    return threading.current_thread() is threading.main_thread()


def _channels(plan: RunPlan) -> dict[str, str] | None:
    """How each role's player runs, by role, from the roles the manifest records: every record
    names them (None when no role records a channel, as in a run before channels)."""
    roles, _, _ = plan.identity()
    found = {name: r.channel for name, r in roles.items() if r.channel is not None}
    return found or None


async def _run_jobs(
    plan: RunPlan,
    jobs: list[EpisodeJob],
    store: RunDirectory,
    executor: Executor,
    max_concurrency: int,
    progress: ProgressReporter,
    state: _SessionState,
    health: RunHealth,
    review: Callable[[EpisodeRecord], EpisodeRecord] | None = None,
) -> None:
    """A pool of ``max_concurrency`` workers pulls jobs; each record is appended when done.

    An executor that queues episodes in its own workers (``executor.queue_depth``) is handed
    that many more, so its slots never wait for the driver between episodes; it still plays
    no more than ``max_concurrency`` at once.

    The session stops early -- episodes in flight are cancelled, every finished one is kept --
    on SIGINT or SIGTERM, when a model endpoint refuses a call (401/403/404), when an
    endpoint answered none of the calls of the first episodes, or when an episode cannot be
    written; ``state.stop`` then says why.
    """
    writer = store.open_appender()
    if writer.set_aside is not None:
        print(
            f"note: the torn last line of {store.episodes_path} (a write cut short) was moved "
            f"to {writer.set_aside}",
            file=sys.stderr,
        )
    pending = iter(jobs)
    left = len(jobs)  # not handed to the executor yet
    held = 0  # handed to the executor and not back yet
    freed = asyncio.Event()  # set whenever the executor gives one back
    tasks: list[asyncio.Task[None]] = []
    channels = _channels(plan)

    async def take(queues: bool) -> EpisodeJob | None:
        """The next job, or None. While more jobs are left than the run plays at once, the
        executor is handed up to its queue depth more; the last ``max_concurrency`` go only
        to free slots (a job queued behind a busy executor worker could wait a whole episode
        there while another has a slot free, and the last jobs set the run's end): the
        workers that only filled queues stop, the others wait for room."""
        nonlocal left, held
        while left <= max_concurrency and (queues or held >= max_concurrency):
            if queues:
                return None
            freed.clear()
            await freed.wait()
        job = next(pending, None)
        if job is not None:
            left -= 1
            held += 1
        return job

    def give_back() -> None:
        nonlocal held
        held -= 1
        freed.set()

    def stop(error: TodevalError) -> None:
        if state.stop is None:
            state.stop = error
        current = asyncio.current_task()
        for task in tasks:
            if task is not current:
                task.cancel()

    async def worker(queues: bool) -> None:
        while (job := await take(queues)) is not None:
            if state.stop is not None:
                return
            started = utc_now()
            progress.started()
            try:
                record = await executor.play(job)
            except WorkersLostError as exc:  # nowhere left to play: resume later
                stop(exc)
                return
            except Exception as exc:
                record = _error_record(plan, job, exc, started)
            finally:
                give_back()
            if health.refusal is not None:  # this episode may have met it: not kept
                stop(health.refusal)
                return
            if review is not None:
                record = review(record)
            if plan.runtime is not None and not plan.runtime.record_calls:
                record = without_call_text(record)
            if record.scorer_version is None and plan.scorer_version is not None:
                record.scorer_version = plan.scorer_version  # whoever played it (a replay too)
            if record.channels is None and channels is not None:
                record.channels = dict(channels)  # as the manifest's roles say (issue 45.6)
            try:
                writer.append(record)
            except TodevalError as exc:
                stop(exc)
                return
            state.count(record)
            progress.finished(record)
            if plan.interactive:  # a person played: show how the dialogue ended
                print(outcome_line(record, plan.success_metric), flush=True)
            limited = health.rate_limited()
            if limited is not None:
                stop(_RateLimited(*limited))
                return
            if state.done >= min(UNREACHABLE_AFTER_EPISODES, len(jobs)):
                dead = health.unreachable()
                if dead is not None:
                    stop(_unreachable_error(*dead, state.done))
                    return
            await asyncio.sleep(0)  # a CPU-bound episode never yields: let signals in

    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, Any]] = []
    if _signals_here():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous = signal.getsignal(signum)
            try:
                loop.add_signal_handler(signum, stop, _Interrupted(signum.name))
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            installed.append((signum, previous))
    try:
        n_workers = max(1, min(max_concurrency + executor.queue_depth, len(jobs)))
        tasks.extend(asyncio.ensure_future(worker(i >= max_concurrency)) for i in range(n_workers))
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result
    finally:
        for signum, previous in installed:
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous)
        progress.close()
        writer.close()
        if plan.aclose is not None:
            await plan.aclose()


def _unreachable_error(endpoint: str, cause: str, episodes: int) -> UsageError:
    first = "the only episode" if episodes == 1 else f"the first {episodes} episodes"
    return UsageError(
        f"{endpoint} answered none of the calls of {first} ({cause}); "
        "stopped: check the URL and that the server is running, then run the same command"
    )


def release_plan(plan: RunPlan) -> None:
    """Close a plan's backends when no episode ran (its workers never opened and closed them)."""
    close = plan.aclose
    if close is not None:

        async def run() -> None:
            await close()

        asyncio.run(run())


def _check_out(run_dir: Path) -> None:
    """``run_dir`` must be a directory or a path where one can be made."""
    for path in (run_dir, *run_dir.parents):
        if path.exists():
            if not path.is_dir():
                what = "is" if path == run_dir else f"is under {path}, which is"
                raise UsageError(f"--out {run_dir} {what} a file, not a directory")
            return


def _check_episodes(store: RunDirectory, plan: RunPlan, wanted: set[tuple[str, int]]) -> int:
    """Refuse to continue a directory holding an episode this run could not have written;
    returns how many lines were read."""
    lines = 0
    for number, record in store.scan_episodes():
        lines += 1
        where = f"{store.episodes_path} line {number} ({record.episode_id})"
        fix = "use another --out directory"
        if record.schema_version > SCHEMA_VERSION:
            raise RefusedError(
                f"{where} has schema_version {record.schema_version}, newer than this todeval "
                f"writes ({SCHEMA_VERSION}); upgrade todeval or {fix}"
            )
        if record.benchmark != plan.benchmark:
            raise RefusedError(
                f"{where} is an episode of {record.benchmark!r}, not {plan.benchmark!r}; {fix}"
            )
        if record.key not in wanted:
            raise RefusedError(
                f"{where} is not part of this run (task {record.task_id!r}, trial "
                f"{record.trial} is not in its selection); {fix}"
            )
        if record.seed != derive_seed(plan.seed, record.task_id, record.trial):
            raise RefusedError(
                f"{where} was played by another run (its seed is not the one seed "
                f"{plan.seed} gives it); {fix}"
            )
    return lines


@dataclass
class _Retries:
    """How many of the run's episodes ended in an infrastructure error, and the first cause
    (counted while the summary reads the episodes: one pass over the file at the end)."""

    count: int = 0
    first: str | None = None

    def counted(self, records: Iterable[EpisodeRecord]) -> Iterator[EpisodeRecord]:
        for record in records:
            if record.outcome is Outcome.INFRASTRUCTURE_ERROR:
                self.count += 1
                if self.first is None:
                    lines = (record.reason or "").splitlines() or ["no reason recorded"]
                    self.first = lines[0][:240]
            yield record


def execute_plan(
    plan: RunPlan,
    run_dir: Path,
    *,
    max_concurrency: int = 8,
    quiet: bool = False,
    command: list[str] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    review: bool = True,
) -> RunResult:
    """Run (or continue) ``plan`` in ``run_dir`` and write its summary.

    With ``review`` (the default) and a plan whose benchmark names a reviewer, each failed
    episode is written with its verdict (who failed, :mod:`todeval.review.live`).

    Raises :class:`~todeval.errors.InterruptedRunError` after SIGINT/SIGTERM, and the one-line
    error that stopped the run early (a refused key or model, an unreachable endpoint, a disk
    that cannot be written) -- each after the finished episodes, the summary and the
    session's episode count are on disk.
    """
    if max_concurrency < 1:
        release_plan(plan)
        raise UsageError("--max-concurrency must be at least 1")
    with contextlib.ExitStack() as stack:
        try:  # one writer per run directory, for the life of the run (a second is refused)
            _check_out(run_dir)
            RunDirectory(run_dir).make()
            stack.enter_context(hold(run_dir / RUN_LOCK, f"run directory {run_dir}"))
        except TodevalError:
            release_plan(plan)
            raise
        return _execute_locked(
            plan,
            run_dir,
            max_concurrency=max_concurrency,
            quiet=quiet,
            command=command,
            executor=executor,
            ray_address=ray_address,
            review=review,
        )


def _execute_locked(
    plan: RunPlan,
    run_dir: Path,
    *,
    max_concurrency: int,
    quiet: bool,
    command: list[str] | None,
    executor: str,
    ray_address: str | None,
    review: bool,
) -> RunResult:
    """:func:`execute_plan` once the run directory's lock is held."""
    store = RunDirectory(run_dir)
    wanted = {job.key for job in plan.jobs}
    session = Session(
        started_at=utc_now(), host=socket.gethostname(), command=command or sys.argv[1:]
    )
    notes: list[str] = []
    try:
        _check_out(run_dir)
        resuming = store.exists()
        if resuming:
            manifest = store.read_manifest()
            _check_resume(manifest, plan, run_dir)
        elif store.has_episodes():
            raise RefusedError(
                f"{run_dir} holds {store.episodes_path.name} but no {store.manifest_path.name}, "
                "so nothing tells which run its episodes belong to; use another --out directory"
            )
        _check_episodes(store, plan, wanted)
    except TodevalError:
        release_plan(plan)
        raise
    if resuming:
        commit = _git_commit()
        if manifest.package_version != __version__ or (
            commit and manifest.git_commit and manifest.git_commit != commit
        ):
            notes.append(
                f"note: {run_dir} was started with todeval {manifest.package_version} "
                f"(commit {(manifest.git_commit or '?')[:10]}); this is {__version__} "
                f"(commit {(commit or '?')[:10]}): finished episodes are kept as they are; "
                "use a new --out directory to re-run them with this version"
            )
    else:
        roles, selection, protocol = plan.identity()
        manifest = Manifest(
            benchmark=plan.benchmark,
            roles=roles,
            selection=selection,
            protocol=protocol,
            config=plan.config,
            config_hash=plan.config_hash,
            task_set_hash=plan.task_set_hash,
            task_set_aliases=list(plan.legacy_task_set_hashes),
            n_tasks=plan.n_tasks,
            seed=plan.seed,
            players=plan.players,
            package_version=__version__,
            git_commit=_git_commit(),
        )
    notes.extend(control_notes(manifest))
    finished = {
        r.key
        for r in store.iter_episodes(light=True)
        if r.outcome is not Outcome.INFRASTRUCTURE_ERROR
    }
    pending = [job for job in plan.jobs if job.key not in finished]
    if not pending and store.read_summary() is not None and manifest.sessions:
        summary = store.read_summary()
        assert summary is not None
        release_plan(plan)  # nothing runs, so the plan's backends are closed here
        return RunResult(summary, run_dir, 0, already_complete=True, notes=notes)
    if resuming and not quiet:
        done = len(plan.jobs) - len(pending)
        print(f"resuming: {done} of {len(plan.jobs)} done", file=sys.stderr)
    runner = make_executor(executor, plan, max_concurrency=max_concurrency, ray_address=ray_address)
    session.executor = runner.description
    manifest.sessions.append(session)
    store.write_manifest(manifest)
    if plan.interactive:
        max_concurrency, quiet = 1, True
    progress = ProgressReporter(
        len(pending), success_metric=plan.success_metric, quiet=quiet, limit=max_concurrency
    )
    state = _SessionState()
    health = RunHealth()
    live = _live_review(plan, manifest, notes) if review else None
    try:
        with watching(health):
            asyncio.run(
                _run_jobs(
                    plan, pending, store, runner, max_concurrency, progress, state, health, live
                )
            )
    finally:
        runner.close()
        final: Summary | None = None
        retries = _Retries()
        try:
            final = _finish(plan, store, wanted, retries)
            session.ended_at = utc_now()
            session.episodes_run = state.done
            store.write_manifest(manifest)
        except TodevalError:
            if state.stop is None:  # else the error that stopped the run says it first
                raise
    if live is not None and live.stopped is not None:
        notes.append(
            f"note: reviewing stopped ({live.stopped}); the failed episodes after it have no "
            f"verdict (todeval review {run_dir} reads them all)"
        )
    if state.first_abort is not None and not plan.interactive:
        noun = "episode" if state.aborted == 1 else "episodes"
        notes.append(f"note: {state.aborted} {noun} aborted; the first, {state.first_abort}")
    if state.stop is not None:
        _raise_stop(state.stop, store, wanted, len(plan.jobs))
    to_retry, first_cause = retries.count, retries.first
    assert final is not None  # written, or the error that kept it from being written raised
    return RunResult(
        final,
        run_dir,
        state.done,
        already_complete=False,
        notes=notes,
        to_retry=to_retry,
        first_cause=first_cause,
    )


def _live_review(plan: RunPlan, manifest: Manifest, notes: list[str]) -> LiveReview | None:
    """The run's reviewer fed one record at a time, if its benchmark names one."""
    if plan.reviewer is None:
        return None
    from todeval.review.live import LiveReview
    from todeval.review.reading import load_reviewer

    try:
        return LiveReview(load_reviewer(plan.reviewer), manifest)
    except Exception as exc:  # a broken reviewer never stops a run
        notes.append(f"note: episodes are written without a review ({plan.reviewer}: {exc})")
        return None


def _finish(
    plan: RunPlan, store: RunDirectory, wanted: set[tuple[str, int]], retries: _Retries
) -> Summary:
    """Summarise the run's episodes and write ``summary.json``; ``retries`` counts the
    infrastructure errors on the way (the file is read once)."""
    if plan.finalize is not None:
        records = retries.counted(r for r in store.iter_episodes() if r.key in wanted)
        summary = plan.finalize(records)
    else:
        records = retries.counted(r for r in store.iter_episodes(light=True) if r.key in wanted)
        summary = summarize(
            plan.benchmark,
            records,
            seed=plan.seed,
            grouped=plan.grouped,
            success_metric=plan.success_metric,
        )
    for _ in records:  # a summary that stopped reading early: the rest still counts
        pass
    _, _, protocol = plan.identity()
    if protocol is not None:
        summary = summary.model_copy(update={"protocol": protocol})
    if plan.scorer_version is not None:
        summary = summary.model_copy(update={"scorer_version": plan.scorer_version})
    store.write_summary(summary)
    return summary


def _raise_stop(
    stop: TodevalError, store: RunDirectory, wanted: set[tuple[str, int]], total: int
) -> None:
    """Raise why the session stopped early, with how far the run got."""
    if isinstance(stop, WorkersLostError):
        kept = sum(
            1
            for r in store.iter_episodes(light=True)
            if r.key in wanted and r.outcome is not Outcome.INFRASTRUCTURE_ERROR
        )
        raise WorkersLostError(
            f"{stop.message}: {kept} of {total} episodes done and kept in {store.path}; "
            "resume with the same command once the cluster has workers again"
        )
    if isinstance(stop, _Interrupted):
        done = sum(
            1
            for r in store.iter_episodes(light=True)
            if r.key in wanted and r.outcome is not Outcome.INFRASTRUCTURE_ERROR
        )
        raise InterruptedRunError(
            f"interrupted ({stop.message}): {done} of {total} episodes done and kept in "
            f"{store.path}; resume with the same command"
        )
    if isinstance(stop, _RateLimited):
        done = sum(
            1
            for r in store.iter_episodes(light=True)
            if r.key in wanted and r.outcome is not Outcome.INFRASTRUCTURE_ERROR
        )
        what = (
            f"{RATE_LIMITED_CALLS} calls in a row gave up"
            if stop.answered_before
            else "it answered no call, and a call gave up"
        )
        raise StoppedForRetryError(
            f"stopped: {stop.endpoint} is rate-limiting ({what}: {stop.message}); {done} of "
            f"{total} episodes done and kept in {store.path}, {total - done} to retry: run the "
            "same command later (--max-retry-wait: how long a call may wait)"
        )
    if isinstance(stop, EndpointRefusedError):
        raise EndpointRefusedError(
            f"{stop.message}; stopped at the first refused call (finished episodes are kept)"
        )
    raise stop
