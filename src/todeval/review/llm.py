"""An LLM reviewer of failed episodes (issue 30, item 3): what rules cannot see.

For every failed episode the model (any backend spec; temperature 0, seeded, through the
response cache) is shown the benchmark's brief of the episode (what the simulator was given and
what the agent had to achieve), how it ended and the transcript (every ``message`` event,
speaker first), with our own prompt (``todeval/review/prompts/review.txt``), and answers one
JSON object: ``verdict`` (``agent``, ``simulator``, ``both``, ``unclear``) and ``reason``. An
unreadable answer is a reviewer failure: counted, no verdict. Every call's tokens, cost and
latency are accounted under the role ``reviewer``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence

from todeval.backends.sampling import generate_accounted
from todeval.backends.types import Backend, ChatMessage, GenerationRequest
from todeval.core.events import type_of_kind
from todeval.core.records import CallUsage, EpisodeRecord
from todeval.dialogue.prompts import PromptSet
from todeval.review import VERDICTS, Review, Reviewer

REVIEW_ROLE = "reviewer"
PROMPTS_PACKAGE = "todeval.review"
TRANSCRIPT_CAP = 12_000
"""Characters of transcript shown (the end kept: failures show late)."""

_JSON = re.compile(r"\{.*\}", re.DOTALL)


def review_prompts() -> PromptSet:
    return PromptSet.load(PROMPTS_PACKAGE)


def transcript(record: EpisodeRecord) -> str:
    """Every message of the episode, one line each: ``speaker: text``."""
    lines = []
    for event in record.events:
        kind = event.type or type_of_kind(event.kind)
        if kind == "message":
            text = " ".join(str(event.data.get("text", "")).split())
            lines.append(f"{event.actor}: {text}")
    out = "\n".join(lines)
    return out if len(out) <= TRANSCRIPT_CAP else "...\n" + out[-TRANSCRIPT_CAP:]


def render(prompts: PromptSet, reviewer: Reviewer, record: EpisodeRecord, brief: str) -> str:
    ending = f"{record.outcome.value}; {record.reason or record.termination or ''}".strip("; ")
    return prompts.render(
        "review",
        agent=reviewer.agent,
        simulator=reviewer.simulator,
        brief=brief or "(none)",
        ending=ending,
        transcript=transcript(record),
    )


def parse_verdict(text: str) -> tuple[str, str] | None:
    """``(verdict, reason)`` from the model's answer, or ``None`` when it has no valid one."""
    found = _JSON.search(text)
    if found is None:
        return None
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    verdict = data.get("verdict") if isinstance(data, dict) else None
    if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS[:-1]:
        return None
    reason = data.get("reason", "")
    return verdict.strip().lower(), str(reason) if reason is not None else ""


async def review_failed(
    reviews: Sequence[Review],
    records: dict[str, EpisodeRecord],
    briefs: dict[str, str],
    reviewer: Reviewer,
    backend: Backend,
    *,
    seed: int = 0,
    concurrency: int = 8,
    usage: list[CallUsage] | None = None,
) -> int:
    """Ask the model about every failed review in place (``llm_verdict``, ``llm_reason``);
    the number of unreadable answers."""
    prompts = review_prompts()
    calls = usage if usage is not None else []
    gate = asyncio.Semaphore(max(1, concurrency))
    failures = 0

    async def one(review: Review) -> None:
        nonlocal failures
        record = records[review.episode_id]
        request = GenerationRequest(
            messages=[
                ChatMessage(
                    role="user",
                    content=render(prompts, reviewer, record, briefs.get(review.episode_id, "")),
                )
            ],
            temperature=0.0,
            max_tokens=200,
            seed=seed,
        )
        async with gate:
            result = await generate_accounted(backend, request, role=REVIEW_ROLE, usage=calls)
        parsed = parse_verdict(result.text)
        if parsed is None:
            failures += 1
            return
        review.llm_verdict, review.llm_reason = parsed  # type: ignore[assignment]

    await asyncio.gather(*(one(r) for r in reviews if r.verdict != "none"))
    return failures


__all__ = [
    "PROMPTS_PACKAGE",
    "REVIEW_ROLE",
    "parse_verdict",
    "render",
    "review_failed",
    "transcript",
]
