"""A ClarQ provider that makes known mistakes at known rates, for measuring ``todeval review``
(issue 30): the ``rule`` provider's decision, then, seeded by the task and the turn,

* a **refusal** (rate :attr:`FaultyProvider.refuse_rate`): a turn the ``rule`` provider answers
  with a release gets the "I cannot answer that" reply instead;
* a **gift** (rate :attr:`FaultyProvider.gift_rate`): a turn it answers with no release, while
  nodes are left, gets the first available node anyway.

Each planted mistake is named in the turn's note (``planted: refusal`` / ``planted: gift``), so
the record says where they are. Against the ``oracle`` seeker (every question asks for an
available node) every refusal is a true ``refused_targeted``; against a seeker asking nothing
specific (the ``generic`` control) every gift is a true ``release_unasked``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from todeval.benchmarks.clarq.protocol import Decision, ProviderTurn, ProviderView, SeekerKind
from todeval.benchmarks.clarq.providers import canned, release_message
from todeval.benchmarks.clarq.providers.rule import RuleProvider
from todeval.dialogue.participants import PlayerOptions

PLANTED = "planted: "


@dataclass
class FaultyProvider:
    """``rule`` with planted refusals and gifts (see the module)."""

    refuse_rate: float = 0.3
    gift_rate: float = 0.5
    rule: RuleProvider = field(default_factory=RuleProvider)

    @classmethod
    def from_options(cls, options: PlayerOptions) -> FaultyProvider:
        return cls()

    async def respond(self, view: ProviderView) -> ProviderTurn:
        turn = self.rule.decide(view)
        if not view.gate_open:
            return turn
        draw = random.Random(f"{view.task.task_id}:{len(view.history)}").random()
        if turn.decision is Decision.RELEASE and draw < self.refuse_rate:
            return ProviderTurn(
                decision=Decision.NO_RELEASE,
                message=release_message(canned(view.lang).for_kind(SeekerKind.UNANSWERABLE)),
                kind=SeekerKind.UNANSWERABLE,
                note=f"{PLANTED}refusal",
            )
        if turn.decision is Decision.NO_RELEASE and view.available and draw < self.gift_rate:
            node = view.available[0]
            return ProviderTurn(
                decision=Decision.RELEASE,
                message=release_message(node.text),
                released=[node.label],
                kind=SeekerKind.ANSWERABLE,
                note=f"{PLANTED}gift",
            )
        return turn


def planted(record_events: list[object]) -> dict[int, str]:
    """Turn -> the mistake planted there (from the provider_decision events' summaries)."""
    out: dict[int, str] = {}
    for event in record_events:
        data = getattr(event, "data", {})
        summary = str(data.get("summary", "")) if isinstance(data, dict) else ""
        if getattr(event, "kind", "") == "provider_decision" and PLANTED in summary:
            out[int(getattr(event, "turn", 0))] = summary.split(PLANTED, 1)[1].split(" ")[0]
    return out


__all__ = ["PLANTED", "FaultyProvider", "planted"]
