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
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from todeval.backends.sampling import Sampling
from todeval.backends.types import ChatMessage
from todeval.core.clock import utc_now
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Timing, episode_id, sum_usage
from todeval.dialogue.chat import json_reply
from todeval.dialogue.episode import EpisodeLog, Termination
from todeval.dialogue.replies import ReplyChecker
from todeval.dialogue.reply import JsonReply

if TYPE_CHECKING:
    from todeval.backends import Backend

ROLE = "system"
"""The ``role`` of every call (usage is reported per role)."""


async def generate_turns(
    backend: Backend,
    sampling: Sampling,
    conversations: list[list[ChatMessage]],
    checkers: list[ReplyChecker],
    seed: int,
) -> list[JsonReply]:
    """All turns of one dialogue, concurrently; the first infrastructure error cancels the rest."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(
                    json_reply(backend, sampling, messages, checker, role=ROLE, seed=seed)
                )
                for messages, checker in zip(conversations, checkers, strict=True)
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
    reply: JsonReply, previous: PredictedTurn | None, active_domains: list[str] | None = None
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
    sampling: Sampling,
    conversations: list[list[ChatMessage]],
    checkers: list[ReplyChecker],
    to_turn: Callable[[JsonReply, PredictedTurn | None], PredictedTurn],
    extra_details: dict[str, Any] | None = None,
) -> EpisodeRecord:
    """Generate every turn and build the dialogue's :class:`EpisodeRecord`.

    ``to_turn(reply, previous)`` turns a reply into the predicted turn; for a format failure it
    must give an empty response and ``previous``'s state (no state change).
    """
    started = utc_now()
    clock = time.perf_counter()
    replies = await generate_turns(backend, sampling, conversations, checkers, context.seed)
    turns: list[PredictedTurn] = []
    for reply in replies:
        turns.append(to_turn(reply, turns[-1] if turns else None))
    failures = sum(t.format_error is not None for t in turns)
    n = len(turns)
    log = EpisodeLog()  # one model_call event per turn (the calls ran concurrently)
    for number, reply in enumerate(replies, 1):
        log.turn = number
        log.usage.append(reply.usage)
    return EpisodeRecord(
        benchmark=context.benchmark,
        episode_id=episode_id(context.dialogue_id, 0),
        task_id=context.dialogue_id,
        trial=0,
        seed=context.seed,
        group=context.group,
        outcome=Outcome.FAILURE if failures else Outcome.SUCCESS,
        termination=Termination.DONE.value,
        reason=f"{failures} of {n} replies failed the format" if failures else "all replies valid",
        metrics={f"{context.metric_prefix}.format_failure_rate": 100.0 * failures / n if n else 0},
        turns=n,
        events=log.events,
        usage=sum_usage(log.usage),
        timing=Timing(
            started_at=started, ended_at=utc_now(), duration_s=round(time.perf_counter() - clock, 6)
        ),
        details={
            "dialogue_id": context.dialogue_id,
            "format_failures": failures,
            "finish_reasons": [r.finish_reason for r in replies],
            "turns": [t.model_dump(exclude_none=True) for t in turns],
            **(extra_details or {}),
        },
    )
