"""ClarQ episodes replayed for ``todeval submit verify`` (:mod:`todeval.submission.replay`).

Under a rule-based provider (``rule``, ``rule-words``) the dialogue is played again by the
real game master (:func:`~.game.play_dialogue`) with the task's own response tree: the seeker's
questions are the recorded ones, and a fresh provider of the run's kind answers them. Every
reply, decision and released node must come out as recorded; the first that does not is named
with its turn (a reply that releases a node the provider would not have released, say). An LLM
provider's replies cannot be re-derived: they are taken as recorded and the verdict says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from todeval.benchmarks.clarq._tasks import ClarqTask
from todeval.benchmarks.clarq.game import play_dialogue
from todeval.benchmarks.clarq.providers import PROVIDER
from todeval.core.records import EpisodeRecord
from todeval.dialogue.episode import EpisodeLog, EpisodeStreams
from todeval.dialogue.participants import PlayerOptions, split_params
from todeval.submission.replay import Mismatch, Replay, Replayer, RunFiles, compare_events

RULE_PROVIDERS = ("rule", "rule-words")
"""The providers whose replies follow from the seeker's questions alone."""
_DIALOGUE = ("provider_message", "seeker_message", "provider_decision", "violation")


class _RecordedSeeker:
    """The seeker's recorded questions, asked again in order."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)

    async def start(self, context: object) -> None:
        return None

    async def respond(self, provider_message: str) -> str:
        if not self.texts:
            raise RuntimeError("the record has no further seeker turn")
        return self.texts.pop(0)


def _start(context: Any, files: RunFiles) -> Replayer[ClarqTask]:
    cfg = context.config
    name = str(cfg.provider)
    if split_params(name)[0] not in RULE_PROVIDERS:

        async def taken(task: ClarqTask, record: EpisodeRecord) -> list[Mismatch]:
            return []

        return Replayer(
            episode=taken,
            replays="nothing: the provider is not rule-based",
            cannot=(f"the {name} provider's replies cannot be re-derived (taken as recorded)",),
        )
    provider = PROVIDER.resolve(name).build(PlayerOptions(role="provider"))

    async def episode(task: ClarqTask, record: EpisodeRecord) -> list[Mismatch]:
        events = [e for e in record.events if e.kind in _DIALOGUE]
        asked = [str(e.data.get("text", "")) for e in events if e.kind == "seeker_message"]
        streams = EpisodeStreams(cfg.seed, task.task_id, record.trial)
        log = EpisodeLog()
        await play_dialogue(
            task,
            _RecordedSeeker(asked),
            provider,
            protocol=cfg.protocol,
            seed=streams.seed_of("seeker"),
            trial=record.trial,
            log=log,
            max_messages=cfg.max_messages,
        )
        again = [e for e in log.events if e.kind in _DIALOGUE]
        found = compare_events(events, again)
        if found is None:
            released = [str(x) for x in record.details.get("released", [])]
            replayed = [x for e in again if e.kind == "provider_message"
                        for x in e.data.get("released", [])]  # fmt: skip
            if released != replayed:
                found = Mismatch(f"released {released} recorded, {replayed} replayed")
        return [found] if found is not None else []

    return Replayer(
        episode=episode,
        replays=f"every reply of the {name} provider re-derived from the seeker's questions "
        f"under {cfg.protocol}",
    )


REPLAY: Replay[Any, ClarqTask] = Replay(start=_start, set_keys=("lang",))
"""The ClarQ benchmark's replay (its spec's ``replay``)."""

__all__ = ["REPLAY", "RULE_PROVIDERS"]
