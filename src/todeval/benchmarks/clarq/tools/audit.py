"""The provider audit: how often does a provider decide as the original provider did?

Teacher-forced, turn by turn. For every provider message of a transcript file (the released
``results/l2l_*.json`` format, :func:`~todeval.benchmarks.clarq._original.read_original`) the
audit rebuilds what the original provider knew -- the history up to the seeker's message, which
nodes were available and which released, whether the gate was open -- and what it decided:

* the first provider turn (and any turn while the gate is closed) is a **gate pass** when its
  message equals response 0, else an **apology** (the gate stays closed);
* a later message equal to an available node's text (``Jax:`` and white space ignored, and
  case and final punctuation) is a **release** of that node, which is then released in the
  rebuilt tree (its children unlock); a message holding several available nodes' texts (the
  multi-info provider) releases all of them, in the order they appear;
* a message in the original's (or our) "enough information" wording is **enough**;
* anything else is **no release** (a message repeating an already released node, or a locked
  one, is counted as such and reported).

The provider under test then answers each rebuilt view (never its own history: every turn
starts from the reference), and its decision class is compared with the reference's. Reported
per scope (``later`` turns, after the gate; ``gate`` turns; ``all``): accuracy over decision
classes, Cohen's kappa, node-id agreement on the turns where both released, the strict
accuracy (class and node ids), the confusion matrix, and the **always-release** baseline
(gate pass on gate turns, release on every later turn: 75.9% of the later turns of the English
GPT-4o reference are releases). Confidence intervals are percentile bootstraps over dialogues
(a resample draws dialogues with replacement and takes all their turns), the kappa difference
to the baseline paired on the same resamples.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from todeval.benchmarks.clarq._original import TranscriptFile
from todeval.benchmarks.clarq._tasks import ClarqTask, ResponseNode, load_tasks
from todeval.benchmarks.clarq._text import (
    Language,
    strip_provider_prefix,
    strip_sentence_end,
)
from todeval.benchmarks.clarq.protocol import (
    Decision,
    Provider,
    ProviderTurn,
    ProviderView,
)
from todeval.benchmarks.clarq.providers import CANNED
from todeval.core.records import CallUsage, Estimate
from todeval.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, interval, seeded_rng

CLASSES: tuple[Decision, ...] = (
    Decision.GATE_PASS,
    Decision.APOLOGY,
    Decision.RELEASE,
    Decision.NO_RELEASE,
    Decision.ENOUGH,
)
"""The decision classes in the order of the confusion matrix."""

ORIGINAL_ENOUGH: dict[Language, str] = {
    "en": "You have already collected enough information to complete the task.",
    "zh": "你已经收集到足够完成任务的信息。",
}
"""The original provider's fixed "enough information" reply (found in its transcripts)."""

SCOPES = ("later", "gate", "all")


def normalize(text: str) -> str:
    """A provider message as compared: no ``Jax:``, single spaces, no final sentence mark,
    case-folded."""
    return strip_sentence_end(" ".join(strip_provider_prefix(text).split())).casefold()


_ENOUGH_TEXTS = frozenset(
    normalize(text) for text in [*ORIGINAL_ENOUGH.values(), *(c.enough for c in CANNED.values())]
)


def is_enough_message(text: str) -> bool:
    """The original's or our own "enough information" reply, in either language."""
    return normalize(text) in _ENOUGH_TEXTS


@dataclass(frozen=True)
class ReferenceTurn:
    """One provider turn of a reference dialogue, with what the provider knew then."""

    dialogue: int  # index of the dialogue in the audit
    task: ClarqTask
    turn: int  # 0, 1, ...: the provider turn after the greeting
    position: int  # index of the provider message in the dialogue
    history: tuple[str, ...]  # greeting ... the seeker's message
    available: tuple[ResponseNode, ...]
    released: tuple[ResponseNode, ...]
    gate_open: bool
    decision: Decision
    labels: tuple[str, ...]
    message: str
    note: str = ""

    @property
    def scope(self) -> str:
        return "later" if self.gate_open else "gate"

    def view(self) -> ProviderView:
        return ProviderView(
            task=self.task,
            history=list(self.history),
            available=list(self.available),
            released=list(self.released),
            gate_open=self.gate_open,
        )


class Reconstruction(BaseModel):
    """What the rebuilding of the reference found (counts over all reference turns)."""

    dialogues: int = 0
    turns: int = 0
    decisions: dict[str, int] = Field(default_factory=dict)
    later_turns: int = 0
    later_release_share: float | None = Field(
        None, description="share of later turns that are releases (the always-release accuracy)"
    )
    enough_dialogues: int = Field(0, description="dialogues with at least one 'enough' turn")
    multi_releases: int = Field(0, description="turns releasing more than one node")
    repeated_node_texts: int = Field(0, description="no-release turns repeating a released node")
    locked_node_texts: int = Field(0, description="no-release turns quoting a locked node")
    skipped: list[str] = Field(default_factory=list, description="dialogues left out, and why")


def _find_releases(message: str, available: Sequence[ResponseNode]) -> list[ResponseNode]:
    said = normalize(message)
    for node in available:
        if normalize(node.text) == said:
            return [node]
    found = []
    for node in available:
        text = normalize(node.text)
        where = said.find(text) if text else -1
        if where >= 0:
            found.append((where, node))
    return [node for _, node in sorted(found, key=lambda pair: pair[0])]


def rebuild_dialogue(
    dialogue: int, task: ClarqTask, messages: Sequence[str], stats: Reconstruction
) -> list[ReferenceTurn]:
    """The reference turns of one dialogue (greeting first, then seeker and provider)."""
    tree = task.tree()
    gate_open = False
    turns: list[ReferenceTurn] = []
    opening = normalize(task.opening)
    for position in range(2, len(messages), 2):
        message = messages[position]
        available = tuple(tree.available())
        released = tuple(tree.released)
        labels: tuple[str, ...] = ()
        note = ""
        if not gate_open:
            decision = Decision.GATE_PASS if normalize(message) == opening else Decision.APOLOGY
        elif is_enough_message(message):
            decision = Decision.ENOUGH
        else:
            nodes = _find_releases(message, available)
            if nodes:
                decision = Decision.RELEASE
                labels = tuple(node.label for node in nodes)
                stats.multi_releases += len(nodes) > 1
            else:
                decision = Decision.NO_RELEASE
                said = normalize(message)
                if any(normalize(n.text) == said for n in released):
                    stats.repeated_node_texts += 1
                    note = "repeats a released node"
                elif any(normalize(n.text) == said for n in task.nodes):
                    stats.locked_node_texts += 1
                    note = "quotes a locked node"
        turns.append(
            ReferenceTurn(
                dialogue=dialogue,
                task=task,
                turn=len(turns),
                position=position,
                history=tuple(messages[:position]),
                available=available,
                released=released,
                gate_open=gate_open,
                decision=decision,
                labels=labels,
                message=message,
                note=note,
            )
        )
        if decision is Decision.GATE_PASS:
            gate_open = True
        for label in labels:
            tree.release(label)
    return turns


def rebuild(
    source: TranscriptFile, *, limit: int | None = None
) -> tuple[list[list[ReferenceTurn]], Reconstruction]:
    """Every dialogue's reference turns (the first ``limit`` dialogues with at least one
    provider turn), and what the rebuilding found."""
    tasks = {task.task_id: task for task in load_tasks(source.language, "test")}
    stats = Reconstruction()
    dialogues: list[list[ReferenceTurn]] = []
    for record in source.records:
        if record.messages is None:
            continue
        if limit is not None and len(dialogues) >= limit:
            break
        task = tasks.get(record.task_id)
        if task is None:
            stats.skipped.append(f"{record.task_id}: not a shipped task")
            continue
        gold = [strip_provider_prefix(g) for g in record.gold]
        if gold != task.responses:
            stats.skipped.append(f"{record.task_id}: its gold differs from the shipped task")
            continue
        turns = rebuild_dialogue(len(dialogues), task, record.messages, stats)
        if turns:
            dialogues.append(turns)
    every = [turn for turns in dialogues for turn in turns]
    later = [turn for turn in every if turn.gate_open]
    counts = Counter(turn.decision.value for turn in every)
    stats.dialogues = len(dialogues)
    stats.turns = len(every)
    stats.decisions = {c.value: counts.get(c.value, 0) for c in CLASSES}
    stats.later_turns = len(later)
    if later:
        stats.later_release_share = sum(t.decision is Decision.RELEASE for t in later) / len(later)
    stats.enough_dialogues = sum(
        any(t.decision is Decision.ENOUGH for t in turns) for turns in dialogues
    )
    return dialogues, stats


class AuditTurn(BaseModel):
    """One audited turn: the reference decision and the provider's."""

    task_id: str
    dialogue: int
    turn: int
    scope: str
    available: list[str]
    reference: Decision
    reference_labels: list[str]
    predicted: Decision
    predicted_labels: list[str]
    kind: str | None = None
    note: str = ""
    message: str = ""

    @property
    def agrees(self) -> bool:
        return self.reference is self.predicted

    @property
    def agrees_strictly(self) -> bool:
        return self.agrees and self.reference_labels == self.predicted_labels


def baseline_decision(turn: ReferenceTurn) -> tuple[Decision, tuple[str, ...]]:
    """The always-release baseline: pass the gate, then release on every later turn (for
    node ids: the first available node, as a provider that never declines would)."""
    if not turn.gate_open:
        return Decision.GATE_PASS, ()
    first = turn.available[:1]
    return Decision.RELEASE, tuple(node.label for node in first)


class Agreement(BaseModel):
    """Agreement with the reference over one scope's turns."""

    turns: int
    dialogues: int
    accuracy: Estimate
    kappa: Estimate
    strict_accuracy: Estimate = Field(description="the class and (for releases) the node ids")
    node_agreement: Estimate = Field(
        description="same node ids, over the turns where both released"
    )
    both_released: int
    baseline_accuracy: Estimate = Field(description="always release (gate pass on gate turns)")
    baseline_kappa: Estimate
    baseline_strict_accuracy: Estimate = Field(description="always the first available node")
    baseline_node_agreement: Estimate = Field(
        description="the first available node, over the turns where both released"
    )
    kappa_gain: Estimate = Field(description="kappa minus the baseline's (paired resamples)")
    confusion: dict[str, dict[str, int]] = Field(
        description="reference class -> predicted class -> turns"
    )
    reference_counts: dict[str, int]
    predicted_counts: dict[str, int]


def kappa_of(matrix: np.ndarray) -> float:
    """Cohen's kappa of a confusion matrix (rows reference, columns predicted); NaN where it
    is undefined (no turns, or one and the same class on both sides: chance agreement 1)."""
    total = float(matrix.sum())
    if total == 0:
        return float("nan")
    observed = float(np.trace(matrix)) / total
    expected = float((matrix.sum(axis=1) * matrix.sum(axis=0)).sum()) / total**2
    return float("nan") if expected >= 1.0 else (observed - expected) / (1.0 - expected)


def _kappas(matrices: np.ndarray) -> np.ndarray:
    """Kappa of each of R flattened K x K matrices (R x K*K)."""
    k = len(CLASSES)
    m = matrices.reshape(-1, k, k)
    total = m.sum(axis=(1, 2))
    observed = np.trace(m, axis1=1, axis2=2) / total
    expected = (m.sum(axis=2) * m.sum(axis=1)).sum(axis=1) / total**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(expected >= 1.0, np.nan, (observed - expected) / (1.0 - expected))
    return np.asarray(kappa, dtype=float)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(num / den, dtype=float)


def _estimate(value: float | None, samples: np.ndarray | None, n: int, level: float) -> Estimate:
    if value is None or np.isnan(value):
        return Estimate(value=None, n=n)
    if samples is None:
        return Estimate(value=value, ci_low=value, ci_high=value, n=n)
    finite = samples[np.isfinite(samples)]
    if not len(finite):
        return Estimate(value=value, n=n)
    low, high = interval(finite, level)
    return Estimate(value=value, ci_low=low, ci_high=high, n=n)


def agreement(
    turns: Sequence[AuditTurn],
    baseline: Sequence[tuple[Decision, Sequence[str]]],
    *,
    seed: int = 0,
    label: str = "later",
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Agreement | None:
    """Agreement figures of ``turns`` (with the baseline's decision and labels for each), CIs
    from a bootstrap over dialogues; ``None`` without turns."""
    if not turns:
        return None
    index = {c: i for i, c in enumerate(CLASSES)}
    k = len(CLASSES)
    dialogues = sorted({t.dialogue for t in turns})
    where = {d: i for i, d in enumerate(dialogues)}
    n_d = len(dialogues)
    # per dialogue: confusion (K*K), baseline confusion (K*K), then strict hits, both
    # released, node hits -- for the provider and for the baseline
    own = np.zeros((n_d, k * k))
    base = np.zeros((n_d, k * k))
    extra = np.zeros((n_d, 6))
    for turn, (guess, labels) in zip(turns, baseline, strict=True):
        d = where[turn.dialogue]
        ref = index[turn.reference]
        own[d, ref * k + index[turn.predicted]] += 1
        base[d, ref * k + index[guess]] += 1
        for offset, predicted, ids in (
            (0, turn.predicted, turn.predicted_labels),
            (3, guess, list(labels)),
        ):
            same_ids = turn.reference_labels == list(ids)
            extra[d, offset] += turn.reference is predicted and same_ids
            if turn.reference is Decision.RELEASE and predicted is Decision.RELEASE:
                extra[d, offset + 1] += 1
                extra[d, offset + 2] += same_ids
    n_turns = own.sum(axis=1)

    def stats(weights: np.ndarray) -> dict[str, np.ndarray]:
        o, b, e, n = weights @ own, weights @ base, weights @ extra, weights @ n_turns
        diagonal = [i * k + i for i in range(k)]
        kappa, base_kappa = _kappas(o), _kappas(b)
        return {
            "accuracy": _ratio(o[:, diagonal].sum(axis=1), n),
            "kappa": kappa,
            "strict": _ratio(e[:, 0], n),
            "node": _ratio(e[:, 2], e[:, 1]),
            "base_accuracy": _ratio(b[:, diagonal].sum(axis=1), n),
            "base_kappa": base_kappa,
            "base_strict": _ratio(e[:, 3], n),
            "base_node": _ratio(e[:, 5], e[:, 4]),
            "gain": kappa - base_kappa,
        }

    point = {key: float(v[0]) for key, v in stats(np.ones((1, n_d))).items()}
    samples: dict[str, np.ndarray] | None = None
    if n_d >= 2 and resamples > 0:
        rng = seeded_rng(seed, f"clarq.audit.{label}")
        idx = rng.integers(0, n_d, size=(resamples, n_d))
        weights = np.zeros((resamples, n_d))
        np.add.at(weights, (np.arange(resamples)[:, None], idx), 1.0)
        samples = stats(weights)

    def est(key: str, n: int) -> Estimate:
        return _estimate(point[key], None if samples is None else samples[key], n, level)

    matrix = own.sum(axis=0).reshape(k, k).astype(int)
    both = int(extra[:, 1].sum())
    return Agreement(
        turns=len(turns),
        dialogues=n_d,
        accuracy=est("accuracy", len(turns)),
        kappa=est("kappa", len(turns)),
        strict_accuracy=est("strict", len(turns)),
        node_agreement=est("node", both),
        both_released=both,
        baseline_accuracy=est("base_accuracy", len(turns)),
        baseline_kappa=est("base_kappa", len(turns)),
        baseline_strict_accuracy=est("base_strict", len(turns)),
        baseline_node_agreement=est("base_node", int(extra[:, 4].sum())),
        kappa_gain=est("gain", len(turns)),
        confusion={
            CLASSES[r].value: {CLASSES[c].value: int(matrix[r, c]) for c in range(k)}
            for r in range(k)
        },
        reference_counts={CLASSES[r].value: int(matrix[r].sum()) for r in range(k)},
        predicted_counts={CLASSES[c].value: int(matrix[:, c].sum()) for c in range(k)},
    )


class AuditSummary(BaseModel):
    """The audit of one provider on one transcript file."""

    source: str
    language: Language
    provider: str
    model: str | None = None
    reconstruction: Reconstruction
    scopes: dict[str, Agreement] = Field(description="later, gate, all")
    errors: int = Field(0, description="turns the provider failed on (left out of the figures)")
    error_examples: list[str] = Field(default_factory=list)
    usage: dict[str, int | float] = Field(default_factory=dict)
    seed: int = 0
    resamples: int = DEFAULT_RESAMPLES
    warnings: list[str] = Field(default_factory=list)


@dataclass
class AuditResult:
    summary: AuditSummary
    turns: list[AuditTurn] = field(default_factory=list)


def audit_turn(reference: ReferenceTurn, answer: ProviderTurn) -> AuditTurn:
    return AuditTurn(
        task_id=reference.task.task_id,
        dialogue=reference.dialogue,
        turn=reference.turn,
        scope=reference.scope,
        available=[node.label for node in reference.available],
        reference=reference.decision,
        reference_labels=list(reference.labels),
        predicted=answer.decision,
        predicted_labels=list(answer.released),
        kind=answer.kind.value if answer.kind is not None else None,
        note=answer.note,
        message=answer.message,
    )


def _usage_totals(usage: Sequence[CallUsage]) -> dict[str, int | float]:
    return {
        "calls": len(usage),
        "cached_calls": sum(u.cached for u in usage),
        "prompt_tokens": sum(u.prompt_tokens for u in usage),
        "completion_tokens": sum(u.completion_tokens for u in usage),
        "cost_usd": round(sum(u.cost_usd for u in usage), 6),
    }


async def audit_provider(
    make_provider: Callable[[], Provider],
    source: TranscriptFile,
    *,
    name: str,
    model: str | None = None,
    limit: int | None = None,
    concurrency: int = 16,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    on_turn: Callable[[AuditTurn], None] | None = None,
) -> AuditResult:
    """Teacher-force a provider (a fresh one from ``make_provider`` per dialogue) on every
    provider turn of ``source`` and compare its decisions with the reference's.

    A turn the provider raises on is counted in ``errors`` and left out of the figures.
    """
    dialogues, stats = rebuild(source, limit=limit)
    gate = asyncio.Semaphore(max(1, concurrency))
    usage: list[CallUsage] = []
    errors: list[str] = []

    async def one(reference: ReferenceTurn, player: Provider) -> AuditTurn | None:
        async with gate:
            view = reference.view()
            try:
                answer = await player.respond(view)
            except Exception as exc:  # the provider's failure on this turn: reported
                errors.append(
                    f"{reference.task.task_id} turn {reference.turn}: {type(exc).__name__}: {exc}"
                )
                return None
            finally:
                usage.extend(view.usage)
        audited = audit_turn(reference, answer)
        if on_turn is not None:
            on_turn(audited)
        return audited

    jobs: list[Coroutine[Any, Any, AuditTurn | None]] = []
    for turns in dialogues:
        player = make_provider()
        jobs.extend(one(turn, player) for turn in turns)
    results = await asyncio.gather(*jobs)
    audited = [turn for turn in results if turn is not None]
    references = {(t.dialogue, t.turn): t for turns in dialogues for t in turns}
    scopes: dict[str, Agreement] = {}
    for scope in SCOPES:
        chosen = [t for t in audited if scope == "all" or t.scope == scope]
        base = [baseline_decision(references[(t.dialogue, t.turn)]) for t in chosen]
        found = agreement(chosen, base, seed=seed, label=scope, resamples=resamples)
        if found is not None:
            scopes[scope] = found
    warnings = list(source.warnings)
    if stats.skipped:
        warnings.append(f"{len(stats.skipped)} dialogues left out: {stats.skipped[0]} ...")
    if errors:
        warnings.append(f"the provider failed on {len(errors)} turns (left out)")
    summary = AuditSummary(
        source=source.source,
        language=source.language,
        provider=name,
        model=model,
        reconstruction=stats,
        scopes=scopes,
        errors=len(errors),
        error_examples=errors[:5],
        usage=_usage_totals(usage),
        seed=seed,
        resamples=resamples,
        warnings=warnings,
    )
    return AuditResult(summary=summary, turns=sorted(audited, key=lambda t: (t.dialogue, t.turn)))


__all__ = [
    "CLASSES",
    "ORIGINAL_ENOUGH",
    "SCOPES",
    "Agreement",
    "AuditResult",
    "AuditSummary",
    "AuditTurn",
    "Reconstruction",
    "ReferenceTurn",
    "agreement",
    "audit_provider",
    "audit_turn",
    "baseline_decision",
    "is_enough_message",
    "kappa_of",
    "normalize",
    "rebuild",
    "rebuild_dialogue",
]
