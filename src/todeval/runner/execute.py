"""Run a plan of episodes into a run directory: concurrency, append-on-finish, resume.

The runner knows nothing about any benchmark: a :class:`RunPlan` gives it the jobs (task id,
trial), an async ``play`` function returning an :class:`EpisodeRecord`, and the config whose
hash guards resumes. Re-running into an existing directory continues it: finished episodes are
kept, infrastructure errors are re-run, and the manifest gains a session. A changed config or
task set is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from todeval import __version__
from todeval.core.clock import utc_now
from todeval.core.identity import RoleIdentity, Selection, legacy_roles, legacy_selection
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Manifest, Session, Summary, Timing, episode_id
from todeval.core.rng import derive_seed
from todeval.errors import RefusedError
from todeval.runner.executors import Executor, make_executor
from todeval.runner.options import RuntimeOptions
from todeval.runner.progress import ProgressReporter
from todeval.runner.store import RunDirectory
from todeval.runner.summary import summarize


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


@dataclass
class RunResult:
    summary: Summary
    run_dir: Path
    episodes_run: int
    already_complete: bool
    notes: list[str] = field(default_factory=list)


def config_hash(config: dict[str, Any]) -> str:
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


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
    if existing.task_set_hash != plan.task_set_hash:
        raise RefusedError(
            f"{run_dir} holds a run over a different task set (hash {existing.task_set_hash} != "
            f"{plan.task_set_hash}); use another --out directory"
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


async def _run_jobs(
    plan: RunPlan,
    jobs: list[EpisodeJob],
    store: RunDirectory,
    executor: Executor,
    max_concurrency: int,
    progress: ProgressReporter,
) -> int:
    """A pool of ``max_concurrency`` workers pulls jobs; each record is appended when done."""
    writer = store.open_appender()
    pending = iter(jobs)
    done = 0

    async def worker() -> None:
        nonlocal done
        for job in pending:
            started = utc_now()
            progress.started()
            try:
                record = await executor.play(job)
            except Exception as exc:
                record = _error_record(plan, job, exc, started)
            writer.append(record)
            done += 1
            progress.finished(record)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(max_concurrency, len(jobs))))))
    finally:
        writer.close()
        if plan.aclose is not None:
            await plan.aclose()
    return done


def _release(plan: RunPlan) -> None:
    """Close a plan's backends when no episode ran (its workers never opened and closed them)."""
    close = plan.aclose
    if close is not None:

        async def run() -> None:
            await close()

        asyncio.run(run())


def execute_plan(
    plan: RunPlan,
    run_dir: Path,
    *,
    max_concurrency: int = 8,
    quiet: bool = False,
    command: list[str] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> RunResult:
    """Run (or continue) ``plan`` in ``run_dir`` and write its summary."""
    store = RunDirectory(run_dir)
    wanted = {job.key for job in plan.jobs}
    session = Session(
        started_at=utc_now(), host=socket.gethostname(), command=command or sys.argv[1:]
    )
    notes: list[str] = []
    if store.exists():
        manifest = store.read_manifest()
        try:
            _check_resume(manifest, plan, run_dir)
        except RefusedError:
            _release(plan)
            raise
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
            n_tasks=plan.n_tasks,
            seed=plan.seed,
            players=plan.players,
            package_version=__version__,
            git_commit=_git_commit(),
        )
    finished = {
        r.key
        for r in store.iter_episodes(light=True)
        if r.outcome is not Outcome.INFRASTRUCTURE_ERROR
    }
    pending = [job for job in plan.jobs if job.key not in finished]
    if not pending and store.read_summary() is not None and manifest.sessions:
        summary = store.read_summary()
        assert summary is not None
        _release(plan)  # nothing runs, so the plan's backends are closed here
        return RunResult(summary, run_dir, 0, already_complete=True, notes=notes)
    runner = make_executor(executor, plan, max_concurrency=max_concurrency, ray_address=ray_address)
    session.executor = runner.description
    manifest.sessions.append(session)
    store.write_manifest(manifest)
    ran = 0
    if plan.interactive:
        max_concurrency, quiet = 1, True
    progress = ProgressReporter(len(pending), success_metric=plan.success_metric, quiet=quiet)
    try:
        ran = asyncio.run(_run_jobs(plan, pending, store, runner, max_concurrency, progress))
    finally:
        runner.close()
        if plan.finalize is not None:
            summary = plan.finalize(r for r in store.iter_episodes() if r.key in wanted)
        else:
            summary = summarize(
                plan.benchmark,
                (r for r in store.iter_episodes(light=True) if r.key in wanted),
                seed=plan.seed,
                grouped=plan.grouped,
                success_metric=plan.success_metric,
            )
        store.write_summary(summary)
        session.ended_at = utc_now()
        session.episodes_run = ran
        store.write_manifest(manifest)
    return RunResult(summary, run_dir, ran, already_complete=False, notes=notes)
