"""Gold replies and run helpers for the generation-run tests.

A scripted backend cannot see which dialogue a call belongs to, and the MultiWOZ test set holds
near-duplicate dialogues whose prompts coincide; the request's seed (derived from the run seed
and the dialogue id) tells them apart, so replies are looked up by (seed, last message).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from todeval.backends import GenerationRequest
from todeval.benchmarks._turns.options import RuntimeOptions
from todeval.benchmarks.incar_turns import prompts as incar_prompts
from todeval.benchmarks.incar_turns.corpus import IncarDialogue
from todeval.benchmarks.incar_turns.corpus import load_dialogues as load_incar
from todeval.benchmarks.multiwoz_turns import prompts as multiwoz_prompts
from todeval.benchmarks.multiwoz_turns.corpus import MultiwozDialogue
from todeval.benchmarks.multiwoz_turns.corpus import load_dialogues as load_multiwoz
from todeval.core.records import EpisodeRecord, Summary
from todeval.core.rng import derive_seed
from todeval.runner import RunDirectory, RunResult, execute_plan
from todeval.scoring.incar import load_gold
from todeval.scoring.multiwoz import CorpusData
from todeval.scoring.multiwoz._domains import estimate_from_states

Key = tuple[int | None, str]
Predictions = dict[str, list[dict[str, Any]]]


def key_of(request: GenerationRequest) -> Key:
    return (request.seed, request.messages[-1].content or "")


def multiwoz_gold(
    n: int, seed: int = 0
) -> tuple[list[MultiwozDialogue], dict[Key, Any], Predictions]:
    """The first ``n`` test dialogues, their gold replies by request key, the gold predictions.

    Gold reply: the reference (placeholders bracketed), the MultiWOZ 2.2 gold state and the
    active domains estimated from the gold states.
    """
    corpus = CorpusData()
    dialogues = load_multiwoz(corpus)[:n]
    table: dict[Key, Any] = {}
    predictions: Predictions = {}
    for d in dialogues:
        states = corpus.gold_states[d.dialogue_id]
        active = estimate_from_states(states)
        turns = []
        for i in range(d.n_turns):
            reply = {"response": d.systems[i], "state": states[i], "active_domains": active[i]}
            turns.append(reply)
            content = multiwoz_prompts.messages(d, i)[-1].content or ""
            table[(derive_seed(seed, d.dialogue_id, 0), content)] = reply
        predictions[d.dialogue_id] = turns
    return dialogues, table, predictions


def incar_gold(
    n: int, split: str = "test", seed: int = 0
) -> tuple[list[IncarDialogue], dict[Key, Any], Predictions]:
    """The first ``n`` dialogues of a split, gold replies by request key, gold predictions."""
    gold = load_gold(split)  # type: ignore[arg-type]
    dialogues = load_incar(split, gold)[:n]  # type: ignore[arg-type]
    table: dict[Key, Any] = {}
    predictions: Predictions = {}
    for d, g in zip(dialogues, gold.dialogues, strict=False):
        turns = []
        for i, t in enumerate(g.turns):
            reply = {"response": t.response, "state": t.state}
            turns.append(reply)
            content = incar_prompts.messages(d, i)[-1].content or ""
            table[(derive_seed(seed, d.dialogue_id, 0), content)] = reply
        predictions[d.dialogue_id] = turns
    return dialogues, table, predictions


def json_replies(table: dict[Key, Any]) -> Callable[[GenerationRequest], str]:
    """A reply function answering each request with its table entry as JSON text."""

    def reply(request: GenerationRequest) -> str:
        return json.dumps(table[key_of(request)])

    return reply


def run(plan: Any, out: Path) -> RunResult:
    return execute_plan(plan, out, quiet=True, max_concurrency=4)


def runtime(out: Path, script: Callable[[GenerationRequest], str]) -> RuntimeOptions:
    return RuntimeOptions(out=out, script=script)


def records(out: Path) -> list[EpisodeRecord]:
    return RunDirectory(out).read_episodes()


def values(summary: Summary) -> dict[str, float | None]:
    """Every metric's point value."""
    return {name: m.micro.value for name, m in summary.metrics.items()}
