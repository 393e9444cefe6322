"""Problem Weaver ``llm`` mode: a generator model writes each buyer turn, a blind verifier
labels it.

The listings, the intent sequences, the slot values and the seller's templated replies are
drawn exactly as in ``template`` mode (the same seed gives the same plan); only the buyer's
wording comes from the **generator** (``prompts/weaver-generate.txt``: the listing, the turns
so far and the sampled intents; reply ``{"message": text}``). A second model, the
**verifier**, then labels each turn from a candidate list (every gold intent plus
distractors, uniform or same-parent) with the labeller's own prompt (``prompts/scripted.txt``)
and never sees the sampled intents. The generator's intents stay the gold; each turn records
the verifier's ids and whether they equal the gold set (``agreed``), and runs report scores
on the agreed turns too. A task whose generator reply cannot be read is dropped and counted.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from todeval.backends import ChatMessage
from todeval.backends.sampling import Sampling
from todeval.benchmarks.bargain.data import (
    Distractors,
    LabelledTurn,
    Utterance,
    candidates,
    parent_groups,
    public_key,
)
from todeval.benchmarks.bargain.hierarchy import Hierarchy, default_hierarchy
from todeval.benchmarks.bargain.labellers import LABELS_SCHEMA
from todeval.benchmarks.bargain.weaver import (
    Listing,
    ScriptedTask,
    ScriptedTurn,
    SetHeader,
    Templates,
    choose_listings,
    content_hash,
    default_templates,
    hierarchy_tag,
    rng_of,
    sample_intents,
    seller_reply,
    slot_values,
    task_id,
    task_of,
)
from todeval.dialogue import PromptSet, ReplyChecker, json_reply
from todeval.runner.options import RuntimeOptions, model_pool

MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "minLength": 1}},
    "required": ["message"],
    "additionalProperties": False,
}
PROMPTS = "todeval.benchmarks.bargain"


@dataclass(frozen=True)
class LlmWeaveSettings:
    n: int
    seed: int
    generator: str
    verifier: str
    k: int = 20
    distractors: Distractors = "uniform"
    candidate_seed: int = 0
    max_concurrency: int = 4
    temperature: float = 0.0
    max_tokens: int | None = None
    constrained: bool = False


@dataclass
class LlmWeaveResult:
    tasks: list[ScriptedTask]
    dropped: list[tuple[str, str]]  # (task id, why)
    turns: int
    agreed: int

    @property
    def disagreement_rate(self) -> float:
        return 1 - self.agreed / self.turns if self.turns else 0.0


def _context_lines(task: ScriptedTask) -> str:
    return "\n".join(
        [
            f"item: {task.title}",
            f"category: {task.category}",
            f"listing price: ${task.price}",
            f"description: {task.description}",
        ]
    )


def _dialogue_lines(utterances: list[Utterance]) -> str:
    return "\n".join(f"{u.speaker}: {u.text}" for u in utterances) or "(none yet)"


class _Weaver:
    def __init__(
        self,
        settings: LlmWeaveSettings,
        runtime: RuntimeOptions,
        hierarchy: Hierarchy,
        templates: Templates,
        progress: Callable[[str], None],
    ) -> None:
        self.s = settings
        self.h = hierarchy
        self.t = templates
        self.labels = hierarchy.labels()
        self.pool = model_pool(None, runtime, seed=settings.seed)
        self.generator = self.pool.get(settings.generator)
        self.verifier = self.pool.get(settings.verifier)
        self.prompts = PromptSet.load(PROMPTS)
        self.sampling = Sampling(settings.constrained, settings.temperature, settings.max_tokens)
        self.message = ReplyChecker(MESSAGE_SCHEMA)
        self.labels_checker = ReplyChecker(LABELS_SCHEMA)
        self.progress = progress
        self.done = 0

    async def task(self, i: int, listing: Listing) -> tuple[ScriptedTask | None, str]:
        rng = rng_of("weaver-task", self.s.seed, i, listing.post_id)
        slots = slot_values(listing, rng)
        plan = sample_intents(rng, self.h, self.t, listing.category)
        shell = task_of(i, listing, [ScriptedTurn(buyer="-", intents=plan[0])])
        context = _context_lines(shell)
        shown: list[Utterance] = []
        turns: list[ScriptedTurn] = []
        for t, intents in enumerate(plan):
            wanted = "\n".join(f"- {x}: {self.labels[x]}" for x in intents)
            text = self.prompts.render(
                "weaver-generate",
                context=context,
                dialogue=_dialogue_lines(shown),
                intents=wanted,
            )
            reply = await json_reply(
                self.generator,
                self.sampling,
                [ChatMessage(role="user", content=text)],
                self.message,
                role="generator",
                seed=self.s.seed,
            )
            if reply.value is None:
                return None, f"turn {t + 1}: unreadable generator reply ({reply.format_error})"
            buyer = " ".join(str(reply.value["message"]).split())
            shown.append(Utterance("Buyer", buyer))
            verifier_ids, agreed = await self.verify(shell.task_id, context, shown, intents)
            seller = None
            if t < len(plan) - 1:
                seller = seller_reply(rng, self.t, intents[0], listing.category, slots)
            turns.append(
                ScriptedTurn(
                    buyer=buyer,
                    intents=intents,
                    seller=seller,
                    verifier=verifier_ids,
                    agreed=agreed,
                )
            )
            if seller is not None:
                shown.append(Utterance("Seller", seller))
        self.done += 1
        if self.done % 10 == 0 or self.done == self.s.n:
            self.progress(f"weaver: {self.done}/{self.s.n} tasks")
        return shell.model_copy(update={"turns": turns}), ""

    async def verify(
        self, dialogue_id: str, context: str, shown: list[Utterance], gold: list[str]
    ) -> tuple[list[str] | None, bool]:
        turn = LabelledTurn(len(shown) - 1, "Buyer", tuple(gold), 0)
        groups = parent_groups("scripted") if self.s.distractors == "hard" else None
        cands = candidates(
            dialogue_id,
            turn,
            list(self.labels),
            self.s.k,
            self.s.candidate_seed,
            public_key("verifier", self.s.candidate_seed),
            groups=groups,
        )
        text = self.prompts.render(
            "scripted",
            context=context,
            dialogue=_dialogue_lines(shown),
            speaker="Buyer",
            candidates="\n".join(f"- {c}: {self.labels[c]}" for c in cands),
        )
        reply = await json_reply(
            self.verifier,
            self.sampling,
            [ChatMessage(role="user", content=text)],
            self.labels_checker,
            role="verifier",
            seed=self.s.seed,
        )
        if reply.value is None:
            return None, False
        ids = list(dict.fromkeys(str(x) for x in reply.value["labels"]))
        return ids, set(ids) == set(gold)


async def weave_llm_async(
    settings: LlmWeaveSettings,
    runtime: RuntimeOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> LlmWeaveResult:
    """``settings.n`` llm-mode tasks (fewer when generator replies cannot be read)."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    weaver = _Weaver(
        settings, runtime or RuntimeOptions(), default_hierarchy(), default_templates(), say
    )
    gate = asyncio.Semaphore(max(1, settings.max_concurrency))

    async def one(i: int, listing: Listing) -> tuple[ScriptedTask | None, str]:
        async with gate:
            return await weaver.task(i, listing)

    try:
        chosen = choose_listings(settings.n, settings.seed)
        results = await asyncio.gather(*(one(i, x) for i, x in enumerate(chosen)))
    finally:
        await weaver.pool.aclose()
    tasks = [t for t, _ in results if t is not None]
    dropped = [(task_id(i), why) for i, (t, why) in enumerate(results) if t is None]
    checked = [turn for t in tasks for turn in t.turns]
    return LlmWeaveResult(tasks, dropped, len(checked), sum(bool(x.agreed) for x in checked))


def llm_header(result: LlmWeaveResult, settings: LlmWeaveSettings, name: str) -> SetHeader:
    return SetHeader(
        name=name,
        mode="llm",
        seed=settings.seed,
        n_tasks=len(result.tasks),
        hierarchy=hierarchy_tag(default_hierarchy()),
        generator=settings.generator,
        verifier=settings.verifier,
        distractors=settings.distractors,
        k=settings.k,
        disagreement_rate=round(result.disagreement_rate, 6),
        content_sha256=content_hash(result.tasks),
    )


__all__ = ["LlmWeaveResult", "LlmWeaveSettings", "llm_header", "weave_llm_async"]
