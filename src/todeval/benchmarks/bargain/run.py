"""A bargain run from its config: one episode per dialogue, every labelled turn scored.

An episode is one dialogue (so resume, trials and the bootstrap over dialogues all work on
the runner's own unit, the task): the labeller is started once, then asked for each labelled
turn in order with the dialogue up to that turn and the turn's candidate list. Per-turn results
go to ``details.turns`` (:class:`~.scoring.TurnScore`), per-dialogue figures to ``metrics``
(what ``todeval compare`` pairs). ``finalize`` pools the turns of all dialogues into the run's
P/R/F1 (micro over turns, macro over labels, by depth) with CIs from resampling dialogues.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from todeval.agents.hub import AGENT
from todeval.benchmarks.bargain.baselines import Fits, random_expectation
from todeval.benchmarks.bargain.data import (
    CANDIDATE_SCHEME,
    DEFAULT_K,
    PAPER_STRATEGIES,
    PROVENANCE,
    PROVENANCE_NOTE,
    Dialogue,
    Distractors,
    Split,
    Track,
    candidates,
    labels_of,
    load_track,
    parent_groups,
    scripted_set,
    task_set_name,
)
from todeval.benchmarks.bargain.keys import SessionKey, session_key, warn_foreign
from todeval.benchmarks.bargain.labellers import (
    LABELLER,
    LabellerContext,
    LabellerView,
    LabelOutput,
    TurnView,
)
from todeval.benchmarks.bargain.replay import REPLAY
from todeval.benchmarks.bargain.scoring import (
    Scores,
    TurnScore,
    metric_summaries,
    score_turn,
    strategy_paper_metrics,
)
from todeval.benchmarks.bargain.scoring import scores as score_turns
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Summary, SummaryTable
from todeval.dialogue import EpisodeEnd, EpisodeLog
from todeval.dialogue.episode import Termination, guarded
from todeval.errors import UsageError
from todeval.runner.naming import run_dir_name
from todeval.runner.options import RunSettings
from todeval.runner.summary import summarize
from todeval.spec import AgentSeat, BenchmarkSpec, Episode, Rescored, RoleSpec, RunContext, Tasks
from todeval.spec.build import task_set_hash
from todeval.stats.bootstrap import DEFAULT_RESAMPLES

BENCHMARK = "bargain"
PREFIX = "bargain"
PROTOCOLS = ("standard",)
PROMPTS_PACKAGE = "todeval.benchmarks.bargain"  # prompts/: one template per track


class BargainConfig(RunSettings):
    """Everything that determines a bargain run's results (hashed: a resume must match it)."""

    track: Track = "craigslist"
    split: Split = "test"
    labeller: str = "llm"
    model: str | None = None
    labeller_url: str | None = Field(None, description="--labeller agent: its chat endpoint")
    labeller_channel: str | None = Field(
        None, description="--labeller agent: the chat endpoint's shape (None: openai-chat)"
    )
    k: int = Field(DEFAULT_K, ge=1, description="candidate-list size (effective: min(k, labels))")
    candidate_seed: int = Field(0, description="seed of the candidate lists (same for all models)")
    distractors: Distractors = Field(
        "uniform", description="scripted: distractors uniform over all intents or same-parent"
    )
    scripted_set: str | None = Field(
        None, description="scripted: a set file (default: the shipped template-mode set)"
    )
    ids: list[str] | None = None
    protocol: Literal["standard"] = "standard"
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None
    resamples: int = Field(DEFAULT_RESAMPLES, ge=1)

    def default_out(self) -> str:
        parts: list[str] = [self.track, *([self.split] if self.track == "casino" else [])]
        if self.scripted_set:
            parts.append(scripted_set(self.scripted_set)[0].name)
        parts.append(self.labeller)
        if self.model:
            parts.append(self.model)
        if self.k != DEFAULT_K:
            parts.append(f"k{self.k}")
        if self.distractors != "uniform":
            parts.append(self.distractors)
        return run_dir_name(
            BENCHMARK,
            parts,
            seed=self.seed,
            constrained=self.constrained,
            limit=self.limit,
            limit_mode=self.limit_mode,
            ids=self.ids,
            trials=self.trials,
        )


class BargainSummary(Summary):
    """The runner's summary plus the bargaining views."""

    track: str = ""
    split: str = ""
    provenance: str = Field("", description="silver (a rule-based parser) or human labels")
    provenance_note: str = ""
    labeller: str = ""
    scores: Scores | None = None
    baselines_fitted_on: str = ""
    random_expectation: dict[str, float] | None = Field(
        None, description="random labeller: the analytic expected micro precision and recall"
    )
    verifier_agreement: dict[str, float] | None = Field(
        None,
        description="scripted llm-mode sets: turns, agreed turns and the disagreement rate of "
        "the blind verifier (scores on the agreed turns are bargain.agreed.*)",
    )


def _turn_views(
    dialogue: Dialogue, k: int, seed: int, key: bytes, distractors: Distractors = "uniform"
) -> list[tuple[TurnView, list[str]]]:
    labels = list(labels_of(dialogue.track))
    groups = parent_groups(dialogue.track) if distractors == "hard" else None
    out = []
    for turn in dialogue.turns:
        cands = candidates(dialogue.dialogue_id, turn, labels, k, seed, key, groups=groups)
        view = TurnView(
            index=turn.index,
            speaker=turn.speaker,
            dialogue=list(dialogue.utterances[: turn.index + 1]),
            candidates=cands,
        )
        out.append((view, list(turn.gold)))
    return out


def _metrics(turns: list[TurnScore]) -> dict[str, float]:
    from todeval.benchmarks.bargain.scoring import Counts

    c = Counts.of(turns)
    return {
        f"{PREFIX}.precision": c.precision,
        f"{PREFIX}.recall": c.recall,
        f"{PREFIX}.f1": c.f1,
        f"{PREFIX}.failure_rate": c.failures / c.turns if c.turns else 0.0,
        f"{PREFIX}.exact": sum(
            (not t.failed) and set(t.predicted or ()) == set(t.gold) for t in turns
        )
        / max(len(turns), 1),
        f"{PREFIX}.turns": float(c.turns),
        f"{PREFIX}.correct": float(c.correct),
        f"{PREFIX}.missed": float(c.missed),
        f"{PREFIX}.incorrect": float(c.incorrect),
        f"{PREFIX}.invalid": float(c.invalid),
    }


def _kind(speaker: str) -> str:
    """The event kind of a speaker's utterance (``Camper 1`` -> ``camper_1``)."""
    return speaker.lower().replace(" ", "_")


def _summary_line(score: TurnScore) -> str:
    got = "unreadable" if score.predicted is None else (", ".join(score.predicted) or "(none)")
    return f"gold: {', '.join(score.gold)} | predicted: {got}"


def _check(config: BargainConfig) -> None:
    if config.labeller == "parser" and config.track != "craigslist":
        raise UsageError("--labeller parser labels craigslist acts only (use --track craigslist)")
    if config.track != "scripted" and (config.scripted_set or config.distractors != "uniform"):
        raise UsageError("--scripted-set and --distractors hard are for --track scripted")
    if config.model is not None and config.labeller != "llm":
        raise UsageError(f"--model is for the llm labeller, not {config.labeller!r}")
    least = smallest_k(config.track, config.split, config.scripted_set)
    if config.k < least:
        raise UsageError(
            f"--k {config.k}: at least {least} on the {config.track} track (its largest gold "
            "set + 1, and never below 5: a shorter list is the gold, or nearly)"
        )


MIN_K = 5


@cache
def largest_gold(track: Track, split: Split, scripted: str | None = None) -> int:
    """The most labels a turn of the track (split, set) holds."""
    return max(
        (len(t.gold) for d in load_track(track, split, scripted) for t in d.turns), default=1
    )


def smallest_k(track: Track, split: Split, scripted: str | None = None) -> int:
    """The smallest ``--k`` a run accepts: the largest gold set + 1, and at least 5 (with ``k``
    at or below a turn's gold size the list *is* the gold: F1 1.000 without a word)."""
    return max(MIN_K, largest_gold(track, split, scripted) + 1)


Views = dict[str, list[tuple[TurnView, list[str]]]]


@dataclass(frozen=True)
class BargainRun:
    """The run-wide parts of a bargain run: the selected dialogues' turn views (candidate
    lists, drawn with the session's secret key), the baselines fitted on every dialogue of the
    track, the track's labels (id -> meaning) and the key (:mod:`.keys`)."""

    views: Views
    fits: Fits
    labels: dict[str, str]
    key: SessionKey


def _prepare(run: RunContext[BargainConfig, Dialogue]) -> BargainRun:
    config = run.config
    key = session_key(run.runtime.out)
    run.closers.append(key.restore)  # the key file goes back even when the run is refused
    views = {
        i: _turn_views(d, config.k, config.candidate_seed, key.key, config.distractors)
        for i, d in run.tasks.items()
    }
    return BargainRun(
        views=views,
        fits=Fits(config.track, run.available, config.split),
        labels=labels_of(config.track),
        key=key,
    )


GOLD_COMMITMENT = "track-bound-v1"


@cache
def track_gold_digest(track: Track, split: Split, scripted: str | None = None) -> bytes:
    """A digest of the gold of *every* turn of the track (split, set): what each task's gold is
    hashed with in the task-set hash, so the hash of a run over one dialogue cannot be brute-
    forced into that dialogue's gold without the whole track's gold."""
    h = hashlib.sha256(b"bargain-track-gold|")
    for d in load_track(track, split, scripted):
        body = [d.dialogue_id, [[t.index, sorted(t.gold)] for t in d.turns]]
        h.update(json.dumps(body, separators=(",", ":")).encode())
        h.update(b"\n")
    return h.digest()


def gold_commitment(config: BargainConfig, dialogue: Dialogue) -> str:
    """A dialogue's gold, committed under the track's gold digest (never the gold itself)."""
    digest = track_gold_digest(config.track, config.split, config.scripted_set)
    body = json.dumps([dialogue.dialogue_id, [[t.index, sorted(t.gold)] for t in dialogue.turns]])
    return hashlib.sha256(digest + body.encode()).hexdigest()


def _task_key(run: RunContext[BargainConfig, Dialogue], dialogue: Dialogue) -> list[Any]:
    """What a dialogue's results depend on: its labelled turns and list sizes, its gold (as a
    commitment bound to the whole track's gold: a run over one dialogue publishes no hash from
    which its few labels could be brute-forced) and how the lists are drawn. Never the lists
    themselves: they come from the secret key, so runs of one config (two models, two
    installations) have the same task set, and the manifest says nothing of a key."""
    shared: BargainRun = run.shared
    views = shared.views[dialogue.dialogue_id]
    return [
        dialogue.dialogue_id,
        CANDIDATE_SCHEME,
        GOLD_COMMITMENT,
        [[v.index, len(v.candidates)] for v, _ in views],
        gold_commitment(run.config, dialogue),
    ]


def _legacy_hash(run: RunContext[BargainConfig, Dialogue], dialogues: Sequence[Dialogue]) -> str:
    """The task-set hash before the gold was committed (each turn's gold in the clear), so run
    directories of that version resume -- given only when the run directory's manifest holds
    it: a new run's manifest would otherwise list it among its aliases, and it is the hash the
    gold of a one-dialogue run could be brute-forced from."""
    out = run.runtime.out
    recorded = _recorded_task_set_hash(out) if out is not None else None
    if recorded is None:
        return ""
    shared: BargainRun = run.shared
    legacy = task_set_hash(
        [
            [
                d.dialogue_id,
                CANDIDATE_SCHEME,
                [[v.index, g, len(v.candidates)] for v, g in shared.views[d.dialogue_id]],
            ]
            for d in dialogues
        ]
    )
    return legacy if legacy == recorded else ""


def _recorded_task_set_hash(out: Path) -> str | None:
    path = out / "manifest.json"
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("task_set_hash")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _labeller_options(run: RunContext[BargainConfig, Dialogue]) -> dict[str, Any]:
    gold = {i: {t.index: list(t.gold) for t in d.turns} for i, d in run.tasks.items()}
    return {"privileged": {"gold": gold}}  # only a privileged labeller (a control) receives it


async def _episode(ep: Episode[BargainConfig, Dialogue]) -> EpisodeRecord:
    shared: BargainRun = ep.run.shared
    config = ep.config
    dialogue = ep.task
    streams = ep.streams
    player = ep.players["labeller"]
    views = shared.views[dialogue.dialogue_id]
    labels = shared.labels
    log = EpisodeLog()
    shared.key.used = True
    context = LabellerContext(
        view=LabellerView(
            track=config.track,
            dialogue_id=dialogue.dialogue_id,
            labels=labels,
            context=dialogue.context,
            seed=streams.seed_of("labeller"),
            usage=log.usage,
        ),
        fitted=shared.fits.for_dialogue(dialogue.dialogue_id),
    )
    scored: list[TurnScore] = []
    depth_of = {t.index: t.depth for t in dialogue.turns}
    agreed_of = {t.index: t.agreed for t in dialogue.turns}
    shown = 0
    end = EpisodeEnd(Outcome.SUCCESS, Termination.DONE, "")
    try:
        await guarded(LABELLER.start(player, context), "labeller", Termination.SYSTEM_ERROR)
        for view, gold_labels in views:
            for u in dialogue.utterances[shown : view.index + 1]:
                log.add(_kind(u.speaker), u.speaker, text=u.text)
            shown = view.index + 1
            log.turn += 1
            out = await guarded(player.respond(view), "labeller", Termination.SYSTEM_ERROR)
            if out.ids is None:
                log.violation("labeller", out.error or "unreadable output", out.raw)
            elif out.ignored:  # keys besides "labels": ignored, never a failed turn
                log.add("ignored_keys", "labeller", keys=out.ignored)
            score = score_turn(
                view.index,
                view.speaker,
                depth_of[view.index],
                view.candidates,
                gold_labels,
                out.ids,
                raw=out.raw,
                error=out.error,
            ).model_copy(update={"agreed": agreed_of[view.index]})
            scored.append(score)
            log.add(
                "labels",
                "labeller",
                summary=_summary_line(score),
                gold=score.gold,
                predicted=score.predicted,
                exact=set(score.predicted or ()) == set(score.gold) and not score.failed,
                candidates=score.candidates,
            )
    except EpisodeEnd as exc:
        end = exc
    for u in dialogue.utterances[shown:]:
        log.add(_kind(u.speaker), u.speaker, text=u.text)
    # a crash scores the turns left as failures
    done = {s.index for s in scored}
    if end.termination is Termination.SYSTEM_ERROR:
        for view, gold_labels in views:
            if view.index not in done:
                scored.append(
                    score_turn(
                        view.index,
                        view.speaker,
                        depth_of[view.index],
                        view.candidates,
                        gold_labels,
                        None,
                        error="not asked: the labeller crashed",
                    ).model_copy(update={"agreed": agreed_of[view.index]})
                )
    failures = sum(s.failed for s in scored)
    exact = all((not s.failed) and set(s.predicted or ()) == set(s.gold) for s in scored)
    if end.termination is Termination.DONE:
        end = EpisodeEnd(
            Outcome.SUCCESS if exact else Outcome.FAILURE,
            Termination.DONE,
            f"{len(scored)} turns labelled, {failures} unreadable",
        )
    log.finish(end)
    reading = (
        "all read"
        if failures == 0
        else ("none read" if failures == len(scored) else "some unreadable")
    )
    # no group: a dialogue's group is not a cluster of bargain's figures (jobs are ungrouped)
    return log.record(
        benchmark=BENCHMARK,
        streams=streams,
        end=end,
        metrics=_metrics(scored) if end.outcome.counts_in_metrics else {},
        labels={"provenance": PROVENANCE[config.track], "reading": reading},
        details={
            "track": config.track,
            "provenance": PROVENANCE[config.track],
            "context": dict(dialogue.context),
            "candidate_key": shared.key.fingerprint,  # which key drew the lists (one-way)
            "turns": [s.model_dump(mode="json") for s in scored],
            "confusion": score_turns(scored, list(labels)).confusion,
        },
    )


def _finalize(
    run: RunContext[BargainConfig, Dialogue], records: list[EpisodeRecord]
) -> BargainSummary:
    shared: BargainRun = run.shared
    used = {str(r.details.get("candidate_key", "")) for r in records} - {""}
    warn_foreign(shared.key, used)
    shared.key.record(used)
    return finalize_run(records, run.config, list(run.tasks.values()), shared.fits)


SCORER_VERSION = "1"
"""The bargain scorer's version: bump it with any change to a turn's counts, the per-dialogue
metrics, the outcome or the labels a stored episode gets (``tests/rescore`` holds golden
episodes)."""


def _rescore(
    run: RunContext[BargainConfig, Dialogue], dialogue: Dialogue, record: EpisodeRecord
) -> Rescored:
    """A stored episode scored again (``todeval rescore``): each labelled turn's recorded list
    and reading (``details.turns``: the candidates shown, the ids read, the raw output) against
    the installed gold, then the episode's metrics, outcome and labels as :func:`_episode`."""
    turns = [TurnScore.model_validate(t) for t in record.details.get("turns", [])]
    of = {t.index: t for t in dialogue.turns}
    scored = [
        score_turn(
            t.index,
            t.speaker,
            of[t.index].depth if t.index in of else t.depth,
            t.candidates,
            list(of[t.index].gold) if t.index in of else t.gold,
            t.predicted,
            raw=t.raw,
            error=t.error,
        ).model_copy(update={"agreed": of[t.index].agreed if t.index in of else t.agreed})
        for t in turns
    ]
    failures = sum(s.failed for s in scored)
    exact = all((not s.failed) and set(s.predicted or ()) == set(s.gold) for s in scored)
    outcome = None
    if record.termination == Termination.DONE.value:
        outcome = Outcome.SUCCESS if exact else Outcome.FAILURE
    reading = (
        "all read"
        if failures == 0
        else ("none read" if failures == len(scored) else "some unreadable")
    )
    return Rescored(
        metrics=_metrics(scored),
        labels={"provenance": PROVENANCE[run.config.track], "reading": reading},
        outcome=outcome,
        details={
            "turns": [s.model_dump(mode="json") for s in scored],
            "confusion": score_turns(scored, list(labels_of(run.config.track))).confusion,
        },
    )


def turn_f1(dialogue: Dialogue, turn: TurnView, output: LabelOutput) -> float:
    """A labelled turn's F1 (the per-step signal of a Gymnasium environment): the predicted
    set against the gold set (both empty: 1; an unreadable answer: 0)."""
    gold = next((set(t.gold) for t in dialogue.turns if t.index == turn.index), set())
    predicted = set(output.ids or [])
    if output.ids is None:
        return 0.0
    if not predicted and not gold:
        return 1.0
    return 2 * len(predicted & gold) / (len(predicted) + len(gold))


SPEC: BenchmarkSpec[BargainConfig, Dialogue] = BenchmarkSpec(
    name=BENCHMARK,
    reference="todeval.benchmarks.bargain.run:SPEC",
    config=BargainConfig,
    tasks=Tasks(
        load=lambda config: load_track(config.track, config.split, config.scripted_set),
        task_id=lambda dialogue: dialogue.dialogue_id,
        group=lambda dialogue: dialogue.group,
        set_name=lambda config: task_set_name(config.track, config.split, config.scripted_set),
        ids=lambda config: config.ids,
        content=_task_key,
        legacy_hash=_legacy_hash,
        noun="dialogue",
        grouped_jobs=False,  # the bootstrap resamples dialogues, not their groups
    ),
    roles=(
        RoleSpec(
            "labeller",
            LABELLER,
            player_key="labeller",
            model_key="model",
            identity_keys=("labeller_url", "labeller_channel"),
            templates=lambda config, prompts: [config.track],
            reads_prompts=lambda config: config.labeller in ("llm", AGENT, "copy-example"),
            options=_labeller_options,
            agent=AgentSeat("labeller_url", "labeller_channel"),
        ),
    ),
    episode=_episode,
    prompts=PROMPTS_PACKAGE,
    pinned_templates=lambda config, prompts: [config.track],  # the labeller reads its track's
    protocols=PROTOCOLS,
    check=_check,
    prepare=_prepare,
    finalize=_finalize,
    scorer_version=SCORER_VERSION,
    rescore=_rescore,
    replay=REPLAY,
    success_metric=None,
    step_reward=turn_f1,
)
"""The bargain benchmark, declared (its profile and controls are registered apart)."""


def finalize_run(
    records: list[EpisodeRecord], config: BargainConfig, chosen: list[Dialogue], fits: Fits
) -> BargainSummary:
    """The runner's summary (usage, latency, per-dialogue metrics) with the pooled
    P/R/F1, failure rate, per-label scores and confusion in place of per-dialogue means."""
    base = summarize(
        BENCHMARK, records, seed=config.seed, resamples=config.resamples, grouped=False
    )
    by_dialogue: dict[str, list[TurnScore]] = {}
    for r in records:
        if not r.outcome.counts_in_metrics:
            continue
        turns = [TurnScore.model_validate(t) for t in r.details.get("turns", [])]
        by_dialogue.setdefault(r.task_id, []).extend(turns)
    labels = list(labels_of(config.track))
    metrics = dict(base.metrics)
    if by_dialogue:
        metrics.update(
            metric_summaries(
                by_dialogue, labels, prefix=PREFIX, seed=config.seed, resamples=config.resamples
            )
        )
    strategies = PAPER_STRATEGIES.get(config.track)
    if by_dialogue and strategies:
        metrics.update(
            strategy_paper_metrics(
                by_dialogue,
                strategies,
                prefix=f"{PREFIX}.paper",
                seed=config.seed,
                resamples=config.resamples,
            )
        )
    all_turns = [t for d in sorted(by_dialogue) for t in by_dialogue[d]]
    agreement = None
    checked = [t for t in all_turns if t.agreed is not None]
    if checked:
        agreed = {d: [t for t in ts if t.agreed] for d, ts in by_dialogue.items()}
        agreed = {d: ts for d, ts in agreed.items() if ts}
        if agreed:
            metrics.update(
                metric_summaries(
                    agreed,
                    labels,
                    prefix=f"{PREFIX}.agreed",
                    seed=config.seed,
                    resamples=config.resamples,
                )
            )
        n_agreed = sum(bool(t.agreed) for t in checked)
        agreement = {
            "turns": float(len(checked)),
            "agreed": float(n_agreed),
            "disagreement_rate": 1 - n_agreed / len(checked),
        }
    expectation = None
    fitted_on = fits.description if chosen else ""
    if config.labeller == "random" and all_turns:
        sizes = [
            (len(t.gold), t.k, fits.for_dialogue(d).label_counts)
            for d in sorted(by_dialogue)
            for t in by_dialogue[d]
        ]
        e_p, e_r = random_expectation(sizes)
        expectation = {"precision": e_p, "recall": e_r}
    fields = base.model_dump()
    fields["metrics"] = metrics
    scored = score_turns(all_turns, labels) if all_turns else None
    if scored is not None:
        fields["tables"] = [t.model_dump() for t in summary_tables(scored, config.track)]
    return BargainSummary.model_validate(
        {
            **fields,
            "track": config.track,
            "split": config.split,
            "provenance": PROVENANCE[config.track],
            "provenance_note": PROVENANCE_NOTE[config.track],
            "labeller": config.labeller,
            "scores": scored.model_dump() if scored is not None else None,
            "baselines_fitted_on": fitted_on,
            "random_expectation": expectation,
            "verifier_agreement": agreement,
        }
    )


def summary_tables(scored: Scores, track: Track) -> list[SummaryTable]:
    """Per-label P/R/F1 and the confusion view, as tables the report shows."""
    provenance = f"{PROVENANCE[track]} labels"
    per_label = SummaryTable(
        name="per-label",
        title="Per-label precision, recall and F1",
        caption=f"Over all scored turns ({provenance}); support = turns with the gold label, "
        "predicted = turns predicting it.",
        columns=["label", "support", "predicted", "correct", "precision", "recall", "F1"],
        rows=[
            [s.label, s.support, s.predicted, s.tp, s.precision, s.recall, s.f1]
            for s in scored.per_label
        ],
    )
    targets = sorted({t for row in scored.confusion.values() for t in row})
    confusion = SummaryTable(
        name="confusion",
        title="Confusion view",
        caption="Rows: gold labels; columns: the valid predicted labels of those turns "
        "((none): nothing valid predicted, (failure): unreadable output). A multi-label turn "
        "counts once per gold label and predicted label.",
        columns=["gold / predicted", *targets],
        rows=[
            [g, *(row.get(t, 0) for t in targets)] for g, row in sorted(scored.confusion.items())
        ],
    )
    return [per_label, confusion]


__all__ = ["BENCHMARK", "SPEC", "BargainConfig", "BargainSummary"]
