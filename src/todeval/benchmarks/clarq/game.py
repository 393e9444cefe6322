"""The ClarQ game master: one self-play episode of a seeker and a provider, and its record.

The game master owns the task's response tree. It sends the provider's fixed greeting, then
alternates: the seeker speaks; a goodbye ends the dialogue, and so does a transcript longer than
:data:`~todeval.benchmarks.clarq.protocol.MAX_MESSAGES` (at most 24 messages, as in the
original's loop); otherwise the provider *decides* (:class:`ProviderTurn`) and the game master
checks the decision against the tree -- the gate first, released labels must be available --
releases the nodes and passes the message on (``Jax: `` prefixed). The finished transcript is
scored at once by the exact scorer (:func:`~todeval.benchmarks.clarq._scoring.score_episode`),
so every record carries ``clarq.success``, ``clarq.aqd`` and ``clarq.aql``.

Protocols (:data:`~todeval.benchmarks.clarq.protocol.PROTOCOLS`):

* ``clarq`` (default) -- the original's turn rules: a goodbye is matched case-sensitively with
  the original's patterns (``Goodbye`` alone, or next to a space, ``.``, ``,``, ``!`` or a line
  break; ``再见`` likewise), the message cap, and the provider's "enough information" reply
  reaches the seeker (it tells the seeker it is done);
* ``strict`` -- a goodbye in any case, and an ``enough`` turn reaches the seeker as a neutral
  reply that releases nothing (:data:`NEUTRAL_REPLIES`): the seeker must know by itself when it
  has everything.

A seeker that crashes (``system_error``) or a provider that crashes or breaks the protocol
(``user_simulator_error``) leaves the task without a scored dialogue: the scorer's rule for a
missing transcript applies (S, AQD and AQL 0); the transcript stays in the events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from todeval.benchmarks.clarq._judge import Judge
from todeval.benchmarks.clarq._scoring import EpisodeScore, score_episode
from todeval.benchmarks.clarq._tasks import ClarqTask, ResponseTree, depth_group
from todeval.benchmarks.clarq._text import Language, provider_message
from todeval.benchmarks.clarq._transcripts import ClarqTranscript
from todeval.benchmarks.clarq.protocol import (
    GOODBYES,
    GREETINGS,
    MAX_MESSAGES,
    NEUTRAL_REPLIES,
    PROTOCOLS,
    Decision,
    Provider,
    ProviderTurn,
    ProviderView,
    Seeker,
    SeekerContext,
)
from todeval.benchmarks.clarq.seekers import SEEKER
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, EpisodeStreams, Termination, guarded

BENCHMARK = "clarq"

_BEFORE: dict[Language, tuple[str, ...]] = {
    "en": (" ", ",", ".", "\n"),
    "zh": (" ", ",", ".", "\n", "，", "。"),
}
_AFTER: dict[Language, tuple[str, ...]] = {
    "en": (" ", ",", ".", "!", "\n"),
    "zh": (" ", ",", ".", "!", "\n", "，", "。", "！", "Jax"),
}


def says_goodbye(text: str, lang: Language, protocol: str = PROTOCOLS[0]) -> bool:
    """Whether a seeker utterance ends the dialogue: the goodbye word alone, or with a space,
    comma, full stop or line break before it, or one of those or ``!`` after it (the original's
    patterns; ``Goodbye Jax`` is ``Goodbye`` + space). ``clarq`` matches case-sensitively,
    ``strict`` in any case."""
    word = GOODBYES[lang]
    if protocol == "strict":
        text, word = text.casefold(), word.casefold()
    if text == word:
        return True
    patterns = [word + a for a in _AFTER[lang]] + [b + word for b in _BEFORE[lang]]
    return any(p in text for p in patterns)


class EndReason(StrEnum):
    """How a dialogue ended (the episode label ``clarq.end``)."""

    GOODBYE = "goodbye"  # the seeker said goodbye
    ENOUGH = "enough"  # ... right after the provider's "enough" turn
    QUIT = "quit"  # ... at once, before asking anything
    MESSAGE_CAP = "message_cap"  # the transcript exceeded MAX_MESSAGES
    SEEKER_ERROR = "seeker_error"
    PROVIDER_ERROR = "provider_error"
    INFRASTRUCTURE = "infrastructure"


_ERROR_REASONS = {
    Termination.SYSTEM_ERROR: EndReason.SEEKER_ERROR,
    Termination.SIMULATOR_ERROR: EndReason.PROVIDER_ERROR,
    Termination.INFRASTRUCTURE: EndReason.INFRASTRUCTURE,
}


def check_turn(turn: object, tree: ResponseTree, gate_open: bool) -> str | None:
    """Why a provider turn breaks the protocol, or ``None``: a :class:`ProviderTurn`; while
    the gate is closed only ``gate_pass`` or ``apology``, later never; ``release`` names
    available labels (each may unlock the next), the other decisions release nothing."""
    if not isinstance(turn, ProviderTurn):
        return f"the provider returned {type(turn).__name__}, not a ProviderTurn"
    opening = (Decision.GATE_PASS, Decision.APOLOGY)
    if not gate_open and turn.decision not in opening:
        return f"{turn.decision.value} before the gate was passed"
    if gate_open and turn.decision in opening:
        return f"{turn.decision.value} after the gate was passed"
    if turn.decision is not Decision.RELEASE:
        return f"{turn.decision.value} released {turn.released}" if turn.released else None
    if not turn.released:
        return "release without labels"
    trial = tree.copy()
    for label in turn.released:
        if not trial.is_available(label):
            return f"released {label!r}, which is not available"
        trial.release(label)
    return None


@dataclass
class Dialogue:
    """A played dialogue: the transcript, the tree as the game master left it, the decisions."""

    messages: list[str]
    tree: ResponseTree
    decisions: list[Decision] = field(default_factory=list)


def _labels(labels: Sequence[str]) -> str:
    return ", ".join(labels) if labels else "–"


async def play_dialogue(
    task: ClarqTask,
    seeker: Seeker,
    provider: Provider,
    *,
    protocol: str,
    seed: int,
    trial: int,
    log: EpisodeLog,
    max_messages: int = MAX_MESSAGES,
) -> tuple[Dialogue, EpisodeEnd]:
    """Play until a goodbye, the message cap (more than ``max_messages`` messages; lower it
    only for smoke tests) or an error; the dialogue and how it ended (the end's outcome is
    provisional: scoring decides success)."""
    lang = task.lang
    greeting = GREETINGS[lang]
    dialogue = Dialogue([greeting], task.tree())
    tree = dialogue.tree
    gate_open = False
    log.add("provider_message", "provider", text=greeting, decision="greeting", released=[])
    context = SeekerContext(task=task, greeting=greeting, seed=seed, usage=log.usage, trial=trial)
    try:
        await guarded(SEEKER.start(seeker, context), "seeker", Termination.SYSTEM_ERROR)
        message = greeting
        while True:
            log.turn += 1
            said = await guarded(seeker.respond(message), "seeker", Termination.SYSTEM_ERROR)
            if not isinstance(said, str):
                raise EpisodeEnd(
                    Outcome.SYSTEM_ERROR,
                    Termination.SYSTEM_ERROR,
                    f"the seeker returned {type(said).__name__}, not text",
                )
            dialogue.messages.append(said)
            log.add("seeker_message", "seeker", text=said)
            if says_goodbye(said, lang, protocol):
                raise EpisodeEnd(Outcome.FAILURE, Termination.DONE, _goodbye_reason(dialogue))
            if len(dialogue.messages) > max_messages:
                raise EpisodeEnd(
                    Outcome.FAILURE,
                    Termination.TURN_CAP,
                    f"message cap: {len(dialogue.messages)} messages without a goodbye",
                )
            view = ProviderView(
                task=task,
                history=tuple(dialogue.messages),
                available=tree.available(),
                released=tree.released,
                gate_open=gate_open,
                usage=log.usage,
                protocol=protocol,
            )
            turn = await guarded(provider.respond(view), "provider", Termination.SIMULATOR_ERROR)
            problem = check_turn(turn, tree, gate_open)
            if problem is not None:
                log.violation("provider", problem, repr(turn))
                raise EpisodeEnd(
                    Outcome.USER_SIMULATOR_ERROR,
                    Termination.SIMULATOR_ERROR,
                    f"the provider broke the protocol: {problem}",
                )
            assert isinstance(turn, ProviderTurn)
            for label in turn.released:
                tree.release(label)
            gate_open = gate_open or turn.decision is Decision.GATE_PASS
            hidden = protocol == "strict" and turn.decision is Decision.ENOUGH
            message = NEUTRAL_REPLIES[lang] if hidden else provider_message(turn.message)
            dialogue.messages.append(message)
            dialogue.decisions.append(turn.decision)
            log.add(
                "provider_message",
                "provider",
                text=message,
                decision=turn.decision.value,
                released=list(turn.released),
            )
            log.add("provider_decision", "provider", **_decision_data(turn, tree, hidden))
    except EpisodeEnd as end:
        return dialogue, end


def _goodbye_reason(dialogue: Dialogue) -> str:
    asked = len(dialogue.messages) // 2 - 1  # seeker turns before the goodbye
    turns = f"{asked} turn" + ("s" if asked != 1 else "")
    if asked == 0:
        return "the seeker said goodbye at once"
    if dialogue.decisions and dialogue.decisions[-1] is Decision.ENOUGH:
        return f"the seeker said goodbye after the provider's 'enough' ({turns})"
    return f"the seeker said goodbye after {turns}"


def end_reason(dialogue: Dialogue, end: EpisodeEnd) -> EndReason:
    if end.termination in _ERROR_REASONS:
        return _ERROR_REASONS[end.termination]
    if end.termination is Termination.TURN_CAP:
        return EndReason.MESSAGE_CAP
    if len(dialogue.messages) == 2:
        return EndReason.QUIT
    if dialogue.decisions and dialogue.decisions[-1] is Decision.ENOUGH:
        return EndReason.ENOUGH
    return EndReason.GOODBYE


def _decision_data(turn: ProviderTurn, tree: ResponseTree, hidden: bool) -> dict[str, Any]:
    parts = [f"released {_labels(turn.released)}"]
    if turn.kind is not None:
        parts.append(f"seeker's turn: {turn.kind.value}")
    parts.append(f"open now: {_labels([n.label for n in tree.available()])}")
    if hidden:
        parts.append("shown as a neutral reply (strict)")
    if turn.note:
        parts.append(turn.note)
    return {
        "decision": turn.decision.value,
        "released": list(turn.released),
        "seeker_kind": turn.kind.value if turn.kind is not None else None,
        "hidden": hidden,
        "summary": " · ".join(parts),
    }


_SCORED_TERMINATIONS = (Termination.DONE, Termination.TURN_CAP)


def transcript(
    task: ClarqTask,
    messages: Sequence[str] | None,
    released: Sequence[str],
    *,
    trial: int,
) -> ClarqTranscript:
    """What the scorer reads of a dialogue (``messages=None``: no scored dialogue)."""
    positions = {node.label: node.position for node in task.nodes}
    return ClarqTranscript(
        task_id=task.task_id,
        task_type=task.type_name,
        depth=task.depth,
        trial=trial,
        gold=task.gold_messages(),
        purposes=task.purposes,
        messages=list(messages) if messages is not None else None,
        released=[positions[label] for label in released],
    )


def depth_metric(task: ClarqTask) -> str:
    """The per-depth success metric of a task: ``clarq.success.depth1``, ``.depth2``,
    ``.depth3+``."""
    return f"clarq.success.depth{depth_group(task.depth)}"


def episode_metrics(task: ClarqTask, score: EpisodeScore, released: int) -> dict[str, float]:
    """S (left out when unjudged, as the scorer does), its per-depth copy, AQD, AQL and the
    share of required responses released."""
    metrics = {
        "clarq.aqd": score.aqd,
        "clarq.aql": score.aql,
        "clarq.released": released / len(task.nodes),
    }
    if score.success is not None:
        metrics["clarq.success"] = float(score.success)
        metrics[depth_metric(task)] = float(score.success)
    if score.economy is not None:
        metrics["clarq.success_economy"] = score.economy
    return metrics


async def play_episode(
    task: ClarqTask,
    seeker: Seeker,
    provider: Provider,
    streams: EpisodeStreams,
    *,
    protocol: str,
    judge: Judge,
    release_rule: bool,
    max_messages: int = MAX_MESSAGES,
) -> EpisodeRecord:
    """One episode, scored (``judge`` for the judge step, its calls in the record's usage;
    ``release_rule``: questions no verdict answers are decided by the release record)."""
    log = EpisodeLog()
    dialogue, end = await play_dialogue(
        task,
        seeker,
        provider,
        protocol=protocol,
        seed=streams.seed_of("seeker"),
        trial=streams.trial,
        log=log,
        max_messages=max_messages,
    )
    released = [node.label for node in dialogue.tree.released]
    scored = end.termination in _SCORED_TERMINATIONS
    record = transcript(task, dialogue.messages if scored else None, released, trial=streams.trial)
    score = await score_episode(record, judge, release_rule=release_rule)
    log.usage.extend(judge.usage)
    outcome = end.outcome
    if scored:
        outcome = Outcome.SUCCESS if score.success else Outcome.FAILURE
    verdict = {True: "success", False: "failure", None: "unjudged"}[score.success]
    reason = (
        f"{end.reason}; released {len(released)} of {len(task.nodes)}; {verdict} ({score.route})"
    )
    log.finish(EpisodeEnd(outcome, end.termination, reason))
    verdicts = [
        entry.model_dump(mode="json")
        for step in score.judge_steps
        if step.answer.origin in ("judge", "cache")
        and (entry := judge.store.get(step.answer.key)) is not None
    ]
    return log.record(
        benchmark=BENCHMARK,
        streams=streams,
        end=end,
        outcome=outcome,
        reason=reason,
        group=task.type_name,
        metrics=episode_metrics(task, score, len(released)),
        labels={"clarq.end": end_reason(dialogue, end).value, "clarq.route": score.route},
        details={
            "depth": task.depth,
            "required": len(task.nodes),
            "released": released,
            "judge": [
                {"gold": s.gold, "origin": s.answer.origin, "match": s.answer.match}
                for s in score.judge_steps
            ],
            **({"verdicts": verdicts} if verdicts else {}),
        },
    )


__all__ = [
    "BENCHMARK",
    "Dialogue",
    "EndReason",
    "check_turn",
    "depth_metric",
    "end_reason",
    "episode_metrics",
    "play_dialogue",
    "play_episode",
    "says_goodbye",
    "transcript",
]
