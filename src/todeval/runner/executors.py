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

import contextlib
import importlib
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from todeval.core.health import RunHealth, current_health, watching
from todeval.core.imports import load_reference
from todeval.core.records import EpisodeRecord
from todeval.errors import EXIT_RETRY, TodevalError, UsageError

if TYPE_CHECKING:
    from todeval.runner.options import RuntimeOptions
    from todeval.runner.plan import EpisodeJob, RunPlan


class Executor(Protocol):
    description: str
    # episodes the driver may hand over beyond the run's concurrency: they wait in the
    # executor's workers, so a worker never idles between episodes for a round trip to the
    # driver (the workers still play no more than the run's concurrency at once)
    queue_depth: int

    async def play(self, job: EpisodeJob) -> EpisodeRecord: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Episodes as asyncio tasks in the driver's event loop."""

    description = "local"
    queue_depth = 0

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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class WorkersLostError(TodevalError):
    """Every Ray worker of the session was lost (their nodes died): the finished episodes are
    kept and the ones in flight are not written, so running the same command resumes."""

    exit_code = EXIT_RETRY


def spread(nodes: list[tuple[str, int]], count: int) -> list[str]:
    """``count`` node ids for as many workers, one per CPU, taking the nodes in turn (so a few
    workers land on different nodes): ``[("a", 2), ("b", 1)]`` and 3 give a, b, a."""
    order: list[str] = []
    depth = max((cpus for _, cpus in nodes), default=0)
    for level in range(depth):
        order.extend(node for node, cpus in nodes if cpus > level)
    if not order:
        return []
    return [order[i % len(order)] for i in range(count)]


def shares(total: int, workers: int) -> list[int]:
    """``total`` episodes in flight split over ``workers`` as evenly as they go, adding up to
    ``total`` (each worker at least one): 10 over 4 gives 3, 3, 2, 2."""
    base, extra = divmod(total, workers)
    return [max(1, base + (1 if i < extra else 0)) for i in range(workers)]


def _why_lost(exc: BaseException) -> str:
    """Why a Ray actor is gone, in a few words: its creation failed (the error's last line),
    or its node died or cannot be reached."""
    if getattr(exc, "actor_init_failed", False):
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return f"a worker could not start: {lines[-1][:200] if lines else type(exc).__name__}"
    return f"their nodes died or cannot be reached: {type(exc).__name__}"


class RayExecutor:
    """Episodes on Ray actors (a local cluster, or an existing one by address).

    One actor per CPU of the cluster's nodes (no more than the episodes in flight), placed on
    the nodes in turn; a node without CPUs (a head started with ``--num-cpus 0``) gets none.
    The run's concurrency is split over the actors (:func:`shares`: each plays at most its
    share at once, together the run's concurrency). Nothing is queued in the actors
    (``queue_depth`` 0): measured on episodes of equal length, a few queued in each actor
    saved the round trip between episodes but cost a whole round of episodes at the end of
    the run (docs/scale.md). Each episode goes to the actor with the most room. An actor that
    dies (its node was lost) leaves the pool and its episodes are played again on the others;
    once none is left the session stops with :class:`WorkersLostError`.
    """

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
        nodes = [
            (str(node["NodeID"]), int(node.get("Resources", {}).get("CPU", 0)))
            for node in ray.nodes()
            if node.get("Alive")
        ]
        cpus = sum(n for _, n in nodes)
        workers = num_workers or max(1, min(cpus, max_concurrency))
        placed = spread(nodes, workers)
        self._shares = shares(max_concurrency, workers)
        self.queue_depth = 0
        actor_cls = ray.remote(num_cpus=0)(_EpisodeWorker)
        runtime = worker_runtime(plan)
        self._actors: list[Any] = []
        for i in range(workers):
            # an async actor plays at most max_concurrency calls at once; the rest wait in
            # its queue, in the order they were sent
            options: dict[str, Any] = {"max_concurrency": self._shares[i]}
            if placed:
                strategies = importlib.import_module("ray.util.scheduling_strategies")
                # hard: a soft affinity lets Ray put workers on a busy node's neighbour
                # (the head, say); a worker whose node is gone fails and leaves the pool
                options["scheduling_strategy"] = strategies.NodeAffinitySchedulingStrategy(
                    placed[i], soft=False
                )
            self._actors.append(
                actor_cls.options(**options).remote(plan.factory, plan.config, runtime)
            )
        self._in_flight = [0] * workers
        self._alive = set(range(workers))
        self._lost: list[str] = []
        self._actor_error: type[BaseException] = ray.exceptions.RayActorError
        used = len(set(placed)) if placed else len(nodes)
        self.description = f"ray ({_count(workers, 'worker')} on {_count(used, 'node')})"

    def _pick(self) -> int:
        if not self._alive:
            raise WorkersLostError(
                f"all {len(self._actors)} Ray workers were lost ({self._lost[-1]})"
            )
        # the most room: fewest handed over beyond (or short of) its share
        return min(self._alive, key=lambda i: (self._in_flight[i] - self._shares[i], i))

    async def play(self, job: EpisodeJob) -> EpisodeRecord:
        while True:
            index = self._pick()
            self._in_flight[index] += 1
            try:
                raw = await self._actors[index].play.remote(job.task_id, job.trial, job.group)
            except self._actor_error as exc:  # its node died: play the episode elsewhere
                if index in self._alive:
                    self._alive.discard(index)
                    self._lost.append(_why_lost(exc))
                continue
            finally:
                self._in_flight[index] -= 1
            break
        reply = json.loads(raw)
        health = current_health()
        if health is not None:
            health.merge(reply["health"])
        return EpisodeRecord.model_validate_json(reply["record"])

    def close(self) -> None:
        for actor in self._actors:
            with contextlib.suppress(Exception):  # a dead actor's node may be gone
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
