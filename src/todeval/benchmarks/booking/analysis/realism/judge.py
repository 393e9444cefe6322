"""LLM-judge naturalness and coherence of user-simulator turns in booking run directories.

Every ``user_message`` of every episode except the protocol's bare ``done`` is one judged
turn: the judge (any backend spec; temperature 0, seed fixed, so the response cache answers a
repeated judgement) gets the conversation up to the turn and the turn itself (the ``judge``
prompt template) and answers two integers from 1 to 5. A reply without both is a judge
failure, counted and left out. Per simulator (the run's ``--user``, with its model for
``llm``), each measure's mean over judged turns carries a 95% percentile-bootstrap interval
resampling dialogues (turns of one dialogue are not independent).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from todeval.backends.sampling import generate_accounted
from todeval.backends.types import Backend, ChatMessage, GenerationRequest
from todeval.core.records import CallUsage, Estimate, RoleUsage, sum_usage
from todeval.dialogue.prompts import PromptSet
from todeval.errors import BadInputError
from todeval.runner.store import RunDirectory
from todeval.stats.bootstrap import bootstrap_mean

JUDGE_ROLE = "realism_judge"
"""The role the judge's calls are accounted under."""

PROMPTS_PACKAGE = "todeval.benchmarks.booking.analysis.realism"
MEASURES = ("naturalness", "coherence")
SCALE = (1, 5)
DONE = "done"
SPEAKERS = {"user_message": "Customer", "system_message": "Assistant"}


def judge_prompts() -> PromptSet:
    return PromptSet.load(PROMPTS_PACKAGE)


@dataclass
class Turn:
    history: list[tuple[str, str]]  # (speaker, text) before the turn
    text: str


@dataclass
class Dialogue:
    episode: str
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Simulator:
    name: str
    runs: list[str] = field(default_factory=list)
    dialogues: list[Dialogue] = field(default_factory=list)


def simulator_name(config: dict[str, object]) -> str:
    user = str(config.get("user", "?"))
    model = config.get("user_model")
    return f"{user}({model})" if user == "llm" and model else user


def read_runs(paths: Sequence[Path]) -> list[Simulator]:
    """The user turns of each run directory, grouped by simulator (in first-seen order)."""
    out: dict[str, Simulator] = {}
    for path in paths:
        run = RunDirectory(path)
        if not run.exists():
            raise BadInputError(f"{path}: not a run directory (no manifest)")
        manifest = run.read_manifest()
        if manifest.benchmark != "booking":
            raise BadInputError(f"{path}: a {manifest.benchmark} run, not a booking run")
        name = simulator_name(dict(manifest.config))
        sim = out.setdefault(name, Simulator(name))
        sim.runs.append(str(path))
        for record in run.iter_episodes():
            task, trial = record.key
            dialogue = Dialogue(f"{path.name}/{task}#{trial}")
            history: list[tuple[str, str]] = []
            for event in record.events:
                if event.kind not in SPEAKERS:
                    continue
                text = str(event.data.get("text", "")).strip()
                if event.kind == "user_message" and text and text.lower() != DONE:
                    dialogue.turns.append(Turn(list(history), text))
                history.append((SPEAKERS[event.kind], text))
            if dialogue.turns:
                sim.dialogues.append(dialogue)
    return list(out.values())


_JSON = re.compile(r"\{[^{}]*\}")


def parse_verdict(text: str) -> dict[str, int] | None:
    """Both measures as integers on the scale, from the judge's reply; None if not there."""
    low, high = SCALE
    for match in _JSON.finditer(text):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            values = {m: data.get(m) for m in MEASURES}
            if all(isinstance(v, int) and not isinstance(v, bool) for v in values.values()):
                scores = {m: int(v) for m, v in values.items() if isinstance(v, int)}
                if all(low <= v <= high for v in scores.values()):
                    return scores
    return None


def render_prompt(prompts: PromptSet, turn: Turn) -> str:
    history = "\n".join(f"{s}: {t}" for s, t in turn.history) or "(nothing yet: the first turn)"
    return prompts.render("judge", history=history, turn=turn.text)


class SimulatorFigures(BaseModel):
    simulator: str
    runs: list[str]
    dialogues: int
    turns: int
    judged: int
    failures: int
    naturalness: Estimate
    coherence: Estimate
    usage: RoleUsage = Field(
        default_factory=RoleUsage,
        description="the judge's calls for this simulator: tokens, cost, latency, cache hits",
    )


class RealismReport(BaseModel):
    judge_model: str
    scale: tuple[int, int] = SCALE
    level: float = 0.95
    resamples: int
    simulators: list[SimulatorFigures]


async def _judge_turns(
    backend: Backend,
    prompts: PromptSet,
    turns: list[Turn],
    seed: int,
    concurrency: int,
    usage: list[CallUsage],
) -> list[dict[str, int] | None]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(turn: Turn) -> dict[str, int] | None:
        request = GenerationRequest(
            messages=[ChatMessage(role="user", content=render_prompt(prompts, turn))],
            temperature=0.0,
            max_tokens=60,
            seed=seed,
        )
        async with gate:
            result = await generate_accounted(backend, request, role=JUDGE_ROLE, usage=usage)
        return parse_verdict(result.text)

    return list(await asyncio.gather(*(one(t) for t in turns)))


async def judge_simulators(
    simulators: Sequence[Simulator],
    backend: Backend,
    *,
    prompts: PromptSet | None = None,
    seed: int = 0,
    resamples: int = 1000,
    concurrency: int = 8,
) -> RealismReport:
    prompts = prompts or judge_prompts()
    figures = []
    for sim in simulators:
        per_dialogue: dict[str, list[list[float]]] = {m: [] for m in MEASURES}
        turns = judged = 0
        calls: list[CallUsage] = []
        for dialogue in sim.dialogues:
            verdicts = await _judge_turns(
                backend, prompts, dialogue.turns, seed, concurrency, calls
            )  # fmt: skip
            turns += len(verdicts)
            good = [v for v in verdicts if v is not None]
            judged += len(good)
            for m in MEASURES:
                per_dialogue[m].append([float(v[m]) for v in good])
        est = {
            m: bootstrap_mean(
                per_dialogue[m],
                seed=seed,
                label=f"realism|{sim.name}|{m}",
                resamples=resamples,
                wilson=False,
            )
            for m in MEASURES
        }
        figures.append(
            SimulatorFigures(
                simulator=sim.name,
                runs=sim.runs,
                dialogues=len(sim.dialogues),
                turns=turns,
                judged=judged,
                failures=turns - judged,
                naturalness=est["naturalness"],
                coherence=est["coherence"],
                usage=sum_usage(calls).get(JUDGE_ROLE, RoleUsage()),
            )
        )
    return RealismReport(judge_model=backend.info.model, resamples=resamples, simulators=figures)


def _est(e: Estimate) -> str:
    if e.value is None:
        return "n/a"
    return f"{e.value:.2f} [{e.ci_low:.2f}, {e.ci_high:.2f}]"


def format_report(report: RealismReport) -> str:
    low, high = report.scale
    head = ["simulator", "dialogues", "turns", "failures", "naturalness", "coherence"]
    head += ["judge calls", "tokens", "cost $", "latency s"]
    rows = [head] + [
        [
            s.simulator,
            str(s.dialogues),
            str(s.turns),
            str(s.failures),
            _est(s.naturalness),
            _est(s.coherence),
            f"{s.usage.calls} ({s.usage.cached_calls} cached)",
            f"{s.usage.prompt_tokens + s.usage.completion_tokens:,}{s.usage.token_marks}",
            f"{s.usage.cost_usd:.4f}",
            f"{s.usage.latency_s:.1f}",
        ]
        for s in report.simulators
    ]
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    lines = [
        f"judge {report.judge_model}; scale {low}-{high}; mean over judged user turns, "
        f"95% bootstrap CI over dialogues ({report.resamples} resamples)",
        "",
    ]
    for r in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n"


__all__ = [
    "JUDGE_ROLE",
    "MEASURES",
    "RealismReport",
    "SimulatorFigures",
    "format_report",
    "judge_simulators",
    "parse_verdict",
    "read_runs",
]
