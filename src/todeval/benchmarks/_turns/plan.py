"""The run plan of a context-to-response benchmark, and its prediction file.

A benchmark describes itself with a :class:`TurnsSpec` -- how a dialogue is grouped, prompted
and hashed, how a reply becomes a predicted turn, which turn fields the scorer reads -- and
hands :func:`build_turns_plan` its loaded dialogues, its reply formats and its scorer call.
The plan has one episode per selected dialogue; ``finalize`` writes the predictions
(``predictions.json`` in the run directory), scores them and returns the scorer's summary plus
the format-failure rate, usage totals and :class:`~.summaries.GenerationStats`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from todeval.backends.sampling import Sampling
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks._turns.generation import EpisodeContext, PredictedTurn, run_dialogue
from todeval.benchmarks._turns.options import TurnsConfig
from todeval.benchmarks._turns.replay import turns_replay
from todeval.benchmarks._turns.summaries import add_run_figures, generation_stats, scored_records
from todeval.core.files import write_atomic
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Summary
from todeval.dialogue.prompts import PromptSet
from todeval.dialogue.replies import ReplyChecker
from todeval.dialogue.reply import JsonReply
from todeval.runner.store import cannot_write
from todeval.spec import BenchmarkSpec, Episode, Rescored, RoleSpec, RunContext, Tasks

PLAYER = "llm"
"""The player of the one role, ``system``: a model generating each turn from the gold history."""

PREDICTIONS_FILE = "predictions.json"
"""The prediction file's name in the run directory."""

Predictions = dict[str, list[dict[str, Any]]]
"""Dialogue id -> the predicted turns, as the scorer reads them."""

Score = Callable[[Predictions, Path | None], Summary | None]
"""The benchmark's scorer call: the predictions and the file they were written to (``None``
without a run directory) -> the scorer's summary, or ``None`` when nothing was scored (the run's
summary is then the run figures alone)."""


class TurnsDialogue(Protocol):
    """What the shared run reads of a benchmark's dialogue."""

    @property
    def dialogue_id(self) -> str: ...

    @property
    def n_turns(self) -> int: ...


D = TypeVar("D", bound=TurnsDialogue)


@dataclass(frozen=True)
class ReplyFormat:
    """The JSON schema a reply must follow, and its checker."""

    schema: dict[str, Any]
    checker: ReplyChecker

    @classmethod
    def of(cls, schema: dict[str, Any]) -> ReplyFormat:
        return cls(schema, ReplyChecker(schema))


def _no_details(dialogue: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class TurnsSpec(Generic[D]):
    """What differs between context-to-response benchmarks (besides corpus and scorer)."""

    benchmark: str
    metric_prefix: str
    prompts_package: str  # the package whose prompts/ folder holds the templates
    summary_type: type[Summary]  # the scorer's summary with a ``generation`` field
    prediction_fields: tuple[str, ...]  # the turn fields written to the prediction file
    group: Callable[[D], str]
    messages: Callable[[D, int, PromptSet], list[ChatMessage]]
    to_turn: Callable[[JsonReply, PredictedTurn | None], PredictedTurn]
    task_key: Callable[[D], Any]  # the dialogue's content, hashed into the task-set hash
    details: Callable[[D], dict[str, Any]] = field(default=_no_details)


def predictions_of(
    records: Iterable[EpisodeRecord], order: Sequence[str], fields: Sequence[str]
) -> Predictions:
    """The scorer's prediction format, dialogues in ``order``.

    Dialogues with an infrastructure error (or without turns) are left out.
    """
    by_id = {r.task_id: r for r in scored_records(list(records))}
    out: Predictions = {}
    for dialogue_id in order:
        record = by_id.get(dialogue_id)
        turns = record.details.get("turns", []) if record is not None else []
        if turns:
            out[dialogue_id] = [{name: t[name] for name in fields} for t in turns]
    return out


def task_set_hash(keys: Sequence[Any]) -> str:
    """The task-set hash before 0.3 (one JSON array of the dialogues' contents), accepted on
    resume so that older run directories continue."""
    blob = json.dumps(list(keys), separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class TurnsScorer(Protocol):
    """A benchmark's scorer for one run: the reply format of a dialogue and the scoring of
    the predictions (``result`` keeps the last scoring for the CLI's table)."""

    def reply_format(self, dialogue: Any) -> ReplyFormat: ...

    def __call__(self, predictions: Predictions, source: Path | None) -> Summary | None: ...


@dataclass(frozen=True)
class TurnsRun:
    """The run-wide parts of a generation run (re-grading a stored run: no model)."""

    model: Backend | None
    sampling: Sampling
    scorer: TurnsScorer


C = TypeVar("C", bound=TurnsConfig)


def turns_benchmark(
    spec: TurnsSpec[D],
    *,
    config: type[C],
    reference: str,
    load: Callable[[C], Sequence[D]],
    task_set: Callable[[C], str],
    canonical: Callable[[str], str],
    scorer: Callable[[C], TurnsScorer],
    scorer_version: str = "1",
) -> BenchmarkSpec[C, D]:
    """The :class:`~todeval.spec.BenchmarkSpec` of a context-to-response benchmark: one
    episode per dialogue (``load``: the config's corpus split), its one role ``system`` a model
    prompted directly; ``finalize`` writes the predictions, scores them (``scorer``) and adds
    the run figures."""

    def prepare(run: RunContext[C, D]) -> TurnsRun:
        cfg = run.config
        model = run.models.get(cfg.model)  # a bad model spec is reported before any dialogue
        run.players_info["system"] = cfg.model
        sampling = Sampling(cfg.constrained, cfg.temperature, cfg.max_tokens)
        return TurnsRun(model, sampling, scorer(cfg))

    def scoring_prepare(run: RunContext[C, D]) -> TurnsRun:
        cfg = run.config
        return TurnsRun(None, Sampling(cfg.constrained, cfg.temperature, cfg.max_tokens),
                        scorer(cfg))  # fmt: skip

    async def episode(ep: Episode[C, D]) -> EpisodeRecord:
        shared: TurnsRun = ep.run.shared
        assert shared.model is not None
        prompts = ep.run.prompts
        assert prompts is not None
        dialogue = ep.task
        form = shared.scorer.reply_format(dialogue)
        conversations = [spec.messages(dialogue, i, prompts) for i in range(dialogue.n_turns)]
        context = EpisodeContext(
            spec.benchmark, dialogue.dialogue_id, spec.group(dialogue), ep.streams.seed,
            spec.metric_prefix,
        )  # fmt: skip
        checkers = [form.checker] * len(conversations)
        return await run_dialogue(
            context, shared.model, shared.sampling, conversations, checkers, spec.to_turn,
            spec.details(dialogue),
        )  # fmt: skip

    def finalize(run: RunContext[C, D], records: list[EpisodeRecord]) -> Summary:
        shared: TurnsRun = run.shared
        return finalize_turns(spec, records, run.config, list(run.tasks), run.runtime.out,
                              shared.scorer)  # fmt: skip

    return BenchmarkSpec(
        name=spec.benchmark,
        reference=reference,
        config=config,
        tasks=Tasks(
            load=load,
            task_id=lambda d: d.dialogue_id,
            group=spec.group,
            set_name=task_set,
            ids=lambda cfg: cfg.dialogue_ids,
            canonical=lambda cfg, dialogues: canonical,
            content=lambda run, d: spec.task_key(d),
            legacy_hash=lambda run, ds: task_set_hash([spec.task_key(d) for d in ds]),
            noun="dialogue",
        ),
        roles=(
            RoleSpec(
                "system",
                None,
                model_key="model",
                player=lambda cfg: PLAYER,
                reads_prompts=lambda cfg: True,
            ),
        ),
        episode=episode,
        prompts=spec.prompts_package,
        prepare=prepare,
        finalize=finalize,
        scorer_version=scorer_version,
        rescore=lambda run, dialogue, record: rescore_turns(spec, record),
        scoring_prepare=scoring_prepare,
        replay=turns_replay(
            PREDICTIONS_FILE,
            lambda records: predictions_of(
                records, [r.task_id for r in records], spec.prediction_fields
            ),
        ),
    )


def rescore_turns(spec: TurnsSpec[Any], record: EpisodeRecord) -> Rescored:
    """A stored dialogue scored again (``todeval rescore``): its format-failure rate and
    outcome from the recorded turns (a turn with a ``format_error`` failed); the corpus scores
    are the summary's, recomputed by ``finalize`` from the same turns."""
    turns = record.details.get("turns", [])
    n = len(turns)
    failures = sum(1 for t in turns if isinstance(t, dict) and t.get("format_error") is not None)
    rate = 100.0 * failures / n if n else 0.0
    return Rescored(
        metrics={f"{spec.metric_prefix}.format_failure_rate": rate},
        labels=dict(record.labels),
        outcome=Outcome.FAILURE if failures else Outcome.SUCCESS,
        reason=f"{failures} of {n} replies failed the format" if failures else "all replies valid",
    )


def finalize_turns(
    spec: TurnsSpec[D],
    records: list[EpisodeRecord],
    config: TurnsConfig,
    order: Sequence[str],
    out: Path | None,
    score: Score,
) -> Summary:
    """Write the prediction file (when there is a run directory), score it, add run figures."""
    predictions = predictions_of(records, order, spec.prediction_fields)
    source: Path | None = None
    if out is not None:
        source = out / PREDICTIONS_FILE
        text = json.dumps(predictions, ensure_ascii=False, indent=1)
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_atomic(source, text + "\n")
        except OSError as exc:
            raise cannot_write(source, exc) from None
    stats = generation_stats(
        records,
        predictions=PREDICTIONS_FILE if source is not None else "",
        prompt_version=config.prompt_version,
    )
    summary = score(predictions, source)
    base = summary
    if base is None:
        base = Summary(benchmark=spec.benchmark, n_episodes=0, outcomes={}, metrics={})
    update = add_run_figures(
        base, records, benchmark=spec.benchmark, prefix=spec.metric_prefix, seed=config.seed,
        resamples=config.resamples,
    )  # fmt: skip
    if summary is None:
        return base.model_copy(update=update)
    fields = summary.model_dump()
    fields.update(update)
    return spec.summary_type.model_validate({**fields, "generation": stats})
