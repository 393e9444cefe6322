"""Where episodes run: in this process's event loop, or on a Ray cluster.

An executor turns an :class:`EpisodeJob` into an :class:`EpisodeRecord`. The driver (see
:mod:`todeval.runner.execute`) is always the single writer of the run directory, so resume
works the same whatever the executor.

The Ray executor starts async actors; each rebuilds the run plan from its factory reference and
config (plans hold closures and open resources, so they are never shipped) and runs many
episodes concurrently in its own event loop. Records travel back as JSON strings, with what the
episode's model calls met (a refused key, an unreachable endpoint) for the driver's
:class:`~todeval.core.health.RunHealth`.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from todeval.core.health import RunHealth, current_health, watching
from todeval.core.imports import load_reference
from todeval.core.records import EpisodeRecord
from todeval.errors import UsageError

if TYPE_CHECKING:
    from todeval.runner.options import RuntimeOptions
    from todeval.runner.plan import EpisodeJob, RunPlan


class Executor(Protocol):
    description: str

    async def play(self, job: EpisodeJob) -> EpisodeRecord: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Episodes as asyncio tasks in the driver's event loop."""

    description = "local"

    def __init__(self, plan: RunPlan) -> None:
        self._plan = plan

    async def play(self, job: EpisodeJob) -> EpisodeRecord:
        return await self._plan.play(job)

    def close(self) -> None:
        return None


PlanFactory = Callable[[dict[str, Any], "RuntimeOptions | None"], "RunPlan"]


def load_factory(reference: str) -> PlanFactory:
    """The plan factory at ``reference``: a function, or a benchmark spec (its ``plan``)."""
    found = load_reference(reference, what="plan factory")
    factory: PlanFactory = getattr(found, "plan", found)  # type: ignore[arg-type]
    return factory


def worker_runtime(plan: RunPlan) -> RuntimeOptions | None:
    """The plan's runtime options that travel to other processes: the cache settings, the
    retry policy and the run's concurrency (scripted reply functions stay in the driver)."""
    from todeval.runner.options import RuntimeOptions

    if plan.runtime is None:
        return None
    return RuntimeOptions(
        cache=plan.runtime.cache,
        cache_path=plan.runtime.cache_path,
        retry=plan.runtime.retry,
        max_concurrency=plan.runtime.max_concurrency,
    )


class _EpisodeWorker:
    """Body of the Ray actor: one plan per worker, episodes on the actor's event loop."""

    def __init__(
        self, factory: str, config: dict[str, Any], runtime: RuntimeOptions | None
    ) -> None:
        self._plan = load_factory(factory)(config, runtime)

    async def play(self, task_id: str, trial: int, group: str) -> str:
        from todeval.runner.plan import EpisodeJob

        health = RunHealth()  # what the episode's model calls met, for the driver's health
        with watching(health):
            record = await self._plan.play(EpisodeJob(task_id, trial, group))
        return json.dumps({"record": record.model_dump_json(), "health": health.snapshot()})


class RayExecutor:
    """Episodes on Ray actors (a local cluster, or an existing one by address)."""

    def __init__(
        self,
        plan: RunPlan,
        *,
        address: str | None = None,
        num_workers: int | None = None,
        max_concurrency: int = 8,
        object_store_memory: int = 100 * 1024 * 1024,
    ) -> None:
        try:
            ray: Any = importlib.import_module("ray")
        except ImportError:
            raise UsageError("--executor ray needs Ray: pip install 'todeval[ray]'") from None
        if plan.factory is None:
            raise UsageError(f"the {plan.benchmark} benchmark cannot run on Ray (no plan factory)")
        self._ray = ray
        self._started_here = not ray.is_initialized()
        if self._started_here:
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "configure_logging": False,
            }
            if address:
                kwargs["address"] = address
            else:
                kwargs["object_store_memory"] = object_store_memory
                kwargs["num_cpus"] = num_workers or os.cpu_count() or 1
            ray.init(**kwargs)
        workers = num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        per_worker = max(1, math.ceil(max_concurrency / workers))
        actor_cls = ray.remote(num_cpus=0)(_EpisodeWorker).options(max_concurrency=per_worker)
        runtime = worker_runtime(plan)
        self._actors = [
            actor_cls.remote(plan.factory, plan.config, runtime) for _ in range(workers)
        ]
        self._next = 0
        nodes = len(ray.nodes())
        self.description = f"ray ({workers} workers on {nodes} node(s))"

    async def play(self, job: EpisodeJob) -> EpisodeRecord:
        actor = self._actors[self._next % len(self._actors)]
        self._next += 1
        reply = json.loads(await actor.play.remote(job.task_id, job.trial, job.group))
        health = current_health()
        if health is not None:
            health.merge(reply["health"])
        return EpisodeRecord.model_validate_json(reply["record"])

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        if self._started_here:
            self._ray.shutdown()


def make_executor(
    name: str,
    plan: RunPlan,
    *,
    max_concurrency: int,
    ray_address: str | None = None,
    num_workers: int | None = None,
) -> Executor:
    if name == "local":
        return LocalExecutor(plan)
    if name == "ray":
        return RayExecutor(
            plan, address=ray_address, num_workers=num_workers, max_concurrency=max_concurrency
        )
    raise UsageError(f"unknown executor {name!r}; valid choices: local, ray")
