"""Score ClarQ transcripts: success S, AQD, AQL per dialogue, then the summary with CIs.

The core is :func:`score_transcripts_async` over typed :class:`ClarqTranscript` records; file
readers only build those records. Metrics (micro value = the headline):

* ``clarq.success`` -- S, the share of dialogues whose required information was all released
  (:mod:`._matching`); unjudged dialogues are left out of it and counted (``judge.unjudged``,
  ``success_bounds`` gives S with all of them failed / all succeeded);
* ``clarq.aqd`` -- AQD, provider answers after the first + 1 - gold lines (r_0 included):
  signed, negative when the seeker stops before all information could be given;
* ``clarq.aql`` -- AQL, the dialogue's mean seeker utterance length: spaces (English) or
  characters (Chinese), the language detected from the first seeker utterance;
* ``clarq.success_economy`` -- SPQ, success weighted by question economy (ours, not the
  paper's; after SPL in navigation): S x (q* / max(q, q*))^2, q the clarifying questions the
  seeker asked (:func:`._questions.questions_asked`: every question of every turn answered
  after the gate, so a one-turn shotgun pays for each) and q* = n the oracle's (one per
  required response). S itself is computed exactly as the original evaluator does.

A task without a dialogue counts 0 on all three. Each dialogue of a task is one episode (the
released files have one per task, so the mean over episodes is the original's sum / 260).
CIs: percentile bootstrap over task types (clusters); Wilson for S; per task type a bootstrap
over its tasks; per tree depth (1, 2, 3+) the cluster bootstrap restricted to those tasks.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from todeval.benchmarks.clarq._judge import (
    RECORDED_JUDGE,
    Judge,
    JudgeAnswer,
    JudgeQuestion,
    VerdictStore,
    recorded_verdicts,
)
from todeval.benchmarks.clarq._matching import (
    AskJudge,
    JudgeStep,
    Route,
    leftover_forms,
    match_dialogue,
)
from todeval.benchmarks.clarq._questions import economy, questions_asked
from todeval.benchmarks.clarq._stats import cluster_bootstrap
from todeval.benchmarks.clarq._tasks import depth_group
from todeval.benchmarks.clarq._text import LANGUAGES, Language, detect_language, utterance_length
from todeval.benchmarks.clarq._transcripts import (
    ClarqTranscript,
    provider_answers,
    seeker_utterances,
)
from todeval.core.records import CIMethod, Estimate, MetricSummary, Summary, sum_usage
from todeval.stats.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    bootstrap_macro,
    bootstrap_mean,
)

ECONOMY = "clarq.success_economy"
METRICS = {ECONOMY: "SPQ", "clarq.success": "S", "clarq.aqd": "AQD", "clarq.aql": "AQL"}
CI_METHOD = (
    "percentile bootstrap over task types (clusters: every task of a drawn type); per type, "
    "over its tasks; per depth, over the types restricted to that depth; Wilson for S"
)


class EpisodeScore(BaseModel):
    """The scores of one dialogue (or of a task without one)."""

    task_id: str
    task_type: str
    depth: int | None = None
    trial: int = 0
    route: Route
    success: bool | None = Field(description="None: unjudged")
    aqd: float
    aql: float
    predictions: int = Field(description="provider answers after the first")
    gold_lines: int = Field(description="gold responses 0..n")
    questions: int = Field(0, description="clarifying questions the seeker asked after the gate")
    economy: float | None = Field(
        None,
        description="SPQ: success x (q* / max(questions, q*))^2, q* = required responses; "
        "None: unjudged",
    )
    judge_steps: list[JudgeStep] = Field(default_factory=list)


class RouteCounts(BaseModel):
    """How each dialogue's success was decided."""

    exact: int = 0
    member: int = 0
    substring: int = 0
    no_prediction: int = 0
    judge: int = Field(0, description="reached the judge: judge_success + judge_failure + unjudged")
    judge_success: int = 0
    judge_failure: int = 0
    unjudged: int = 0
    no_purpose: int = Field(0, description="leftover gold without a purpose (dev): failure")
    missing: int = Field(0, description="no dialogue for the task: failure")


class JudgeReport(BaseModel):
    """Who judged, how much of S the judge decided, and what could not be judged."""

    model: str = Field(description="the judge model whose verdicts were used")
    recorded_model: str = RECORDED_JUDGE
    online: bool = Field(description="new questions were sent to the model")
    decided: int = Field(description="outcomes the judge decided")
    share_decided: float = Field(description="decided / episodes: how far a judge can move S")
    unjudged: int = Field(description="outcomes left open: a verdict was not available")
    questions: int = Field(description="judge questions looked up or asked")
    from_recorded: int = Field(0, description="answered by the shipped recorded verdicts")
    from_cache: int = Field(0, description="answered by the user's verdict file")
    from_release: int = Field(
        0, description="decided 'no' by a self-play release record (no verdict was available)"
    )
    new_calls: int = 0
    errors: int = 0
    verdict_file: str | None = None


class ClarqSummary(Summary):
    """``Summary`` plus route counts, the judge's share, depth breakdowns and warnings."""

    scorer: str = "ClarQ-LLM evaluator rules (released evaluation.py), re-implemented"
    sources: list[str] = Field(default_factory=list)
    language: str = Field("", description="en, zh, or mixed")
    task_types: list[str] = Field(default_factory=list, description="in task-file order")
    routes: RouteCounts
    judge: JudgeReport
    success_bounds: list[float] = Field(
        default_factory=list,
        description="S over every episode with each unjudged one counted failed / succeeded",
    )
    by_depth: dict[str, dict[str, Estimate]] = Field(
        default_factory=dict, description="metric -> tree depth group (1, 2, 3+) -> estimate"
    )
    warnings: list[str] = Field(default_factory=list)


class ClarqScore(BaseModel):
    episodes: list[EpisodeScore]
    summary: ClarqSummary


def dialogue_aqd(record: ClarqTranscript) -> float:
    if record.messages is None:
        return 0.0
    return float(len(provider_answers(record.messages)) + 1 - len(record.gold))


def dialogue_aql(record: ClarqTranscript) -> float:
    """Mean seeker utterance length; 0 without a dialogue or without a seeker turn."""
    if record.messages is None:
        return 0.0
    utterances = seeker_utterances(record.messages)
    if not utterances:
        return 0.0
    language = detect_language(utterances[0])
    return sum(utterance_length(u, language) for u in utterances) / len(utterances)


def transcript_language(record: ClarqTranscript) -> Language:
    """The language a transcript's questions are read in: its task id's, else its gold's."""
    prefix = record.task_id.split("/", 1)[0]
    for lang in LANGUAGES:
        if prefix == lang:
            return lang
    return detect_language(record.gold[1] if len(record.gold) > 1 else "")


def release_aware(record: ClarqTranscript, ask: AskJudge) -> AskJudge:
    """``ask``, except that a question no verdict answers (unjudged: no judge model to ask)
    about a gold sentence whose response the game master never released is decided "no" by
    the release record (origin ``release``). A released response stays unjudged: only a judge
    can say whether a reworded release conveyed it."""
    forms = leftover_forms(record.gold)
    released = {forms[i - 1] for i in record.released or () if 0 < i <= len(forms)}

    async def answer(question: JudgeQuestion) -> JudgeAnswer:
        got = await ask(question)
        if got.origin == "unjudged" and question.gold not in released:
            return JudgeAnswer(key=got.key, match=False, origin="release")
        return got

    return answer


async def score_episode(
    record: ClarqTranscript, judge: Judge, *, release_rule: bool = False
) -> EpisodeScore:
    """One dialogue's scores. With ``release_rule`` a self-play record's release record
    (``record.released``) decides questions no verdict answers (:func:`release_aware`)."""
    common = {
        "task_id": record.task_id,
        "task_type": record.task_type,
        "depth": record.depth,
        "trial": record.trial,
        "gold_lines": len(record.gold),
    }
    if record.messages is None:
        return EpisodeScore(
            route="missing",
            success=False,
            aqd=0.0,
            aql=0.0,
            predictions=0,
            economy=0.0,
            **common,
        )
    predictions = provider_answers(record.messages)
    ask: AskJudge = judge.answer
    if release_rule and record.released is not None:
        ask = release_aware(record, judge.answer)
    result = await match_dialogue(record.gold, record.purposes, predictions, ask)
    opening = record.gold[0] if record.gold else None
    asked = questions_asked(record.messages, transcript_language(record), opening)
    return EpisodeScore(
        route=result.route,
        success=result.success,
        aqd=dialogue_aqd(record),
        aql=dialogue_aql(record),
        predictions=len(predictions),
        questions=asked,
        economy=None
        if result.success is None
        else economy(result.success, asked, len(record.gold) - 1),
        judge_steps=result.steps,
        **common,
    )


def count_routes(episodes: Sequence[EpisodeScore]) -> RouteCounts:
    counts = RouteCounts()
    for e in episodes:
        if e.route == "judge":
            counts.judge += 1
            if e.success is None:
                counts.unjudged += 1
            elif e.success:
                counts.judge_success += 1
            else:
                counts.judge_failure += 1
        else:
            setattr(counts, e.route, getattr(counts, e.route) + 1)
    return counts


def _metric_values(episodes: Sequence[EpisodeScore], name: str) -> list[tuple[EpisodeScore, float]]:
    if name == "clarq.success":
        return [(e, float(e.success)) for e in episodes if e.success is not None]
    if name == ECONOMY:
        return [(e, e.economy) for e in episodes if e.economy is not None]
    return [(e, e.aqd if name == "clarq.aqd" else e.aql) for e in episodes]


def _metric_summary(
    pairs: Sequence[tuple[EpisodeScore, float]],
    *,
    binary: bool,
    label: str,
    seed: int,
    resamples: int,
    level: float,
) -> tuple[MetricSummary, dict[str, Estimate]]:
    values = [v for _, v in pairs]
    types = [e.task_type for e, _ in pairs]
    micro = cluster_bootstrap(
        values, types, seed=seed, label=label, resamples=resamples, level=level, wilson=binary
    )
    per_type: dict[str, dict[str, list[float]]] = {}
    for e, v in pairs:
        per_type.setdefault(e.task_type, {}).setdefault(e.task_id, []).append(v)
    by_group = {
        t: bootstrap_mean(
            list(tasks.values()),
            seed=seed,
            label=f"{label}@{t}",
            resamples=resamples,
            level=level,
            wilson=binary,
        )
        for t, tasks in sorted(per_type.items())
    }
    macro = (
        bootstrap_macro(
            {t: list(tasks.values()) for t, tasks in per_type.items()},
            seed=seed,
            label=label,
            resamples=resamples,
            level=level,
        )
        if per_type
        else None
    )
    by_depth: dict[str, Estimate] = {}
    for group in sorted({depth_group(e.depth) for e, _ in pairs}):
        chosen = [(e, v) for e, v in pairs if depth_group(e.depth) == group]
        by_depth[group] = cluster_bootstrap(
            [v for _, v in chosen],
            [e.task_type for e, _ in chosen],
            seed=seed,
            label=f"{label}#depth{group}",
            resamples=resamples,
            level=level,
            wilson=binary,
        )
    return MetricSummary(micro=micro, macro=macro, by_group=by_group), by_depth


def summarize(
    episodes: Sequence[EpisodeScore],
    judge: Judge,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    sources: Sequence[str] = (),
    language: str = "",
    warnings: Sequence[str] = (),
) -> ClarqSummary:
    """The :class:`ClarqSummary` of scored episodes."""
    metrics: dict[str, MetricSummary] = {}
    by_depth: dict[str, dict[str, Estimate]] = {}
    for name in METRICS:
        metrics[name], by_depth[name] = _metric_summary(
            _metric_values(episodes, name),
            binary=name == "clarq.success",
            label=name,
            seed=seed,
            resamples=resamples,
            level=level,
        )
    routes = count_routes(episodes)
    n = len(episodes)
    won = sum(e.success is True for e in episodes)
    origins = Counter(s.answer.origin for e in episodes for s in e.judge_steps)
    decided = routes.judge_success + routes.judge_failure
    report = JudgeReport(
        model=judge.model,
        online=not judge.offline,
        decided=decided,
        share_decided=decided / n if n else 0.0,
        unjudged=routes.unjudged,
        questions=sum(origins.values()),
        from_recorded=origins["recorded"],
        from_cache=origins["cache"],
        from_release=origins["release"],
        new_calls=judge.calls,
        errors=len(judge.errors),
        verdict_file=str(judge.store.path) if judge.store.path is not None else None,
    )
    notes = list(warnings)
    if not judge.is_recorded_model:
        notes.append(
            f"judge model {judge.model!r} is not the recorded judge ({RECORDED_JUDGE}): "
            f"S is not comparable with the released figures ({decided} of {n} outcomes judged)"
        )
    if origins["release"]:
        notes.append(
            f"{origins['release']} judge questions were decided 'no' by the release record "
            "(self-play, no verdict available): only information the provider released "
            "counts, so S may be lower than a judge would give"
        )
    if routes.unjudged:
        how = "offline" if judge.offline else "after judge errors"
        notes.append(
            f"{routes.unjudged} of {n} dialogues are unjudged ({how}): S is over the "
            f"{n - routes.unjudged} decided ones; bounds "
            f"[{won / n:.4f}, {(won + routes.unjudged) / n:.4f}] over all {n}"
        )
    if judge.errors:
        notes.append(f"{len(judge.errors)} judge errors, first: {judge.errors[0]}")
    return ClarqSummary(
        benchmark="clarq",
        n_episodes=n,
        outcomes={
            "success": won,
            "failure": n - won - routes.unjudged,
            "unjudged": routes.unjudged,
        },
        metrics=metrics,
        ci=CIMethod(method=CI_METHOD, level=level, resamples=resamples, seed=seed),
        usage=sum_usage(judge.usage),
        labels={"clarq.route": dict(Counter(e.route for e in episodes))},
        sources=list(sources),
        language=language,
        task_types=list(dict.fromkeys(e.task_type for e in episodes)),
        routes=routes,
        judge=report,
        success_bounds=[won / n, (won + routes.unjudged) / n] if n else [],
        by_depth=by_depth,
        warnings=notes,
    )


def offline_judge() -> Judge:
    """The recorded verdicts only: no model, no file (the library default)."""
    return Judge(VerdictStore(layers=[recorded_verdicts()]), model=RECORDED_JUDGE)


async def score_transcripts_async(
    records: Sequence[ClarqTranscript],
    judge: Judge | None = None,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    sources: Sequence[str] = (),
    warnings: Sequence[str] = (),
    release_rule: bool = False,
) -> ClarqScore:
    """Score every record (dialogues concurrently; judge questions of one dialogue in order);
    ``release_rule``: see :func:`score_episode`."""
    judge = judge or offline_judge()
    episodes = list(
        await asyncio.gather(*(score_episode(r, judge, release_rule=release_rule) for r in records))
    )
    languages = {r.task_id.split("/", 1)[0] for r in records}
    language = languages.pop() if len(languages) == 1 else ("mixed" if languages else "")
    summary = summarize(
        episodes,
        judge,
        seed=seed,
        resamples=resamples,
        level=level,
        sources=sources,
        language=language,
        warnings=warnings,
    )
    return ClarqScore(episodes=episodes, summary=summary)


def score_transcripts(
    records: Sequence[ClarqTranscript],
    judge: Judge | None = None,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    sources: Sequence[str] = (),
    warnings: Sequence[str] = (),
    release_rule: bool = False,
) -> ClarqScore:
    """:func:`score_transcripts_async` for callers without an event loop."""
    return asyncio.run(
        score_transcripts_async(
            records,
            judge,
            seed=seed,
            resamples=resamples,
            level=level,
            sources=sources,
            warnings=warnings,
            release_rule=release_rule,
        )
    )


__all__ = [
    "CI_METHOD",
    "ECONOMY",
    "METRICS",
    "ClarqScore",
    "ClarqSummary",
    "EpisodeScore",
    "JudgeReport",
    "RouteCounts",
    "count_routes",
    "dialogue_aqd",
    "dialogue_aql",
    "offline_judge",
    "release_aware",
    "score_episode",
    "score_transcripts",
    "score_transcripts_async",
    "summarize",
]
