"""One model call per system turn, and the episode record of a dialogue.

Every turn of a dialogue is generated from the *gold* history, so the turns do not depend on
each other and run concurrently (the endpoint's connection limit still caps calls in flight).
A reply that fails the schema check is a format failure, never an error; an infrastructure
error (a server that never answered) cancels the dialogue's other calls and propagates, so the
runner records the dialogue as ``infrastructure_error`` and re-runs it on resume.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from todeval.backends.types import ChatMessage, GenerationRequest
from todeval.benchmarks._turns.replies import ReplyChecker
from todeval.core.outcome import Outcome
from todeval.core.records import CallUsage, EpisodeRecord, Timing, episode_id, sum_usage

if TYPE_CHECKING:
    from todeval.backends import Backend, RetryPolicy
    from todeval.backends.scripted import ReplyFunction
    from todeval.runner.execute import RunPlan

ROLE = "system"
"""The ``role`` of every call (usage is reported per role)."""


@dataclass(frozen=True)
class Sampling:
    """Generation settings of every call of a run."""

    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None

    def request(
        self, messages: list[ChatMessage], schema: dict[str, Any], *, seed: int
    ) -> GenerationRequest:
        """A request; the schema is sent (and enforced by the backend) only when constrained.

        Unconstrained, the prompt alone describes the format, so format adherence is measured.
        """
        return GenerationRequest(
            messages=messages,
            response_schema=schema if self.constrained else None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
        )


class ModelPool:
    """The run's backend for one model (one response cache, one limiter pool), built lazily."""

    def __init__(
        self,
        spec: str,
        models_file: str | None,
        *,
        cache: bool = True,
        cache_path: str | None = None,
        retry: RetryPolicy | None = None,
        script: ReplyFunction | None = None,
        seed: int = 0,
    ) -> None:
        self.spec = spec
        self.models_file = models_file
        self._use_cache = cache
        self._cache_path = cache_path
        self._retry = retry
        self._script = script
        self._seed = seed
        self._backend: Backend | None = None
        self._cache: Any = None

    def get(self) -> Backend:
        """The backend (built on first use; errors in the spec surface here)."""
        if self._backend is None:
            from todeval.backends import (
                LimiterPool,
                ResponseCache,
                default_cache_path,
                make_backend,
            )

            if self._use_cache and not self.spec.startswith("scripted:"):
                self._cache = ResponseCache(self._cache_path or default_cache_path())
            self._backend = make_backend(
                self.spec,
                self.models_file,
                cache=self._cache,
                limiters=LimiterPool(),
                retry=self._retry,
                seed=self._seed,
                script=self._script,
            )
        return self._backend

    def info(self) -> dict[str, Any]:
        return self.get().info.model_dump(mode="json")

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def release_models(plan: RunPlan) -> None:
    """Close a plan's backends when the runner did not (a run that was already complete)."""
    close = plan.aclose
    if close is None:
        return

    async def run() -> None:
        await close()

    asyncio.run(run())


class TurnReply(BaseModel):
    """What one call produced: the validated object, or the format failure and raw text."""

    value: dict[str, Any] | None = None
    format_error: str | None = None
    raw: str = ""
    finish_reason: str = "stop"
    usage: CallUsage


async def _one_turn(
    backend: Backend, request: GenerationRequest, checker: ReplyChecker
) -> TurnReply:
    result = await backend.generate(request, role=ROLE)
    usage = result.usage
    if usage.role != ROLE:
        usage = usage.model_copy(update={"role": ROLE})
    text = result.text
    if not text and result.tool_calls:  # a tool call where JSON text was asked for
        text = result.tool_calls[0].arguments
    checked = checker.check(text)
    return TurnReply(
        value=checked.value,
        format_error=checked.error,
        raw=text,
        finish_reason=result.finish_reason,
        usage=usage,
    )


async def generate_turns(
    backend: Backend, requests: list[GenerationRequest], checkers: list[ReplyChecker]
) -> list[TurnReply]:
    """All turns of one dialogue, concurrently; the first infrastructure error cancels the rest."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(_one_turn(backend, request, checker))
                for request, checker in zip(requests, checkers, strict=True)
            ]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


class PredictedTurn(BaseModel):
    """One turn as recorded in ``details.turns`` (and copied into the prediction file)."""

    response: str
    state: dict[str, Any]
    active_domains: list[str] | None = None
    format_error: str | None = Field(None, description="why the reply was rejected")
    raw: str | None = Field(None, description="the raw reply text, kept for format failures")


def failed_turn(
    reply: TurnReply, previous: PredictedTurn | None, active_domains: list[str] | None = None
) -> PredictedTurn:
    """The turn recorded for a format failure: an empty response and ``previous``'s state
    (no state change), with the reason and the raw reply kept."""
    return PredictedTurn(
        response="",
        state=dict(previous.state) if previous is not None else {},
        active_domains=active_domains,
        format_error=reply.format_error,
        raw=reply.raw,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class EpisodeContext:
    """Identity of the dialogue being generated."""

    benchmark: str
    dialogue_id: str
    group: str
    seed: int
    metric_prefix: str


async def run_dialogue(
    context: EpisodeContext,
    backend: Backend,
    requests: list[GenerationRequest],
    checkers: list[ReplyChecker],
    to_turn: Callable[[TurnReply, PredictedTurn | None], PredictedTurn],
    extra_details: dict[str, Any] | None = None,
) -> EpisodeRecord:
    """Generate every turn and build the dialogue's :class:`EpisodeRecord`.

    ``to_turn(reply, previous)`` turns a reply into the predicted turn; for a format failure it
    must give an empty response and ``previous``'s state (no state change).
    """
    started = _now()
    clock = time.perf_counter()
    replies = await generate_turns(backend, requests, checkers)
    turns: list[PredictedTurn] = []
    for reply in replies:
        turns.append(to_turn(reply, turns[-1] if turns else None))
    failures = sum(t.format_error is not None for t in turns)
    n = len(turns)
    return EpisodeRecord(
        benchmark=context.benchmark,
        episode_id=episode_id(context.dialogue_id, 0),
        task_id=context.dialogue_id,
        trial=0,
        seed=context.seed,
        group=context.group,
        outcome=Outcome.FAILURE if failures else Outcome.SUCCESS,
        reason=f"{failures} of {n} replies failed the format" if failures else "all replies valid",
        metrics={f"{context.metric_prefix}.format_failure_rate": 100.0 * failures / n if n else 0},
        turns=n,
        usage=sum_usage([r.usage for r in replies]),
        timing=Timing(
            started_at=started, ended_at=_now(), duration_s=round(time.perf_counter() - clock, 6)
        ),
        details={
            "dialogue_id": context.dialogue_id,
            "format_failures": failures,
            "finish_reasons": [r.finish_reason for r in replies],
            "turns": [t.model_dump(exclude_none=True) for t in turns],
            **(extra_details or {}),
        },
    )
