"""Booking systems for the review's held-out study (issue 42, item 6).

The booking review's rules were written against the agenda user, the rule system and the
planted mistakes of :mod:`todeval.testing.booking_faults`. These systems fail in other ways, so
their episodes can check the rules on behaviour they were not written for
(``tests/fixtures/review_heldout``). Both wrap the rule system (MultiWOZ sets and domain packs)
and draw every choice from the system's own seeded stream (``SystemContext.rng``); neither is
told the goal.

``RefusingSystem``
    searches and answers as the rule system does, but every booking it would make becomes a
    refusal in one of several wordings ("Unfortunately I'm unable to complete the reservation
    right now."): the system never books.
``FlakySystem``
    the rule system with glitches: in about a third of its replies the message is replaced by
    an apology that asks the user to say it again, and about one booking in three is sent
    without one of its arguments.

Run them as ``--system todeval.testing.booking_heldout:RefusingSystem`` (or ``:FlakySystem``).
"""

from __future__ import annotations

import random

from todeval.benchmarks.booking.messages import Observation, SystemContext, SystemOutput, ToolCall
from todeval.benchmarks.booking.systems.rule import RuleSystem

REFUSALS = (
    "Unfortunately I'm unable to complete the reservation right now.",
    "I'm afraid I can't make that reservation for you.",
    "Sorry, the booking could not be made. Is there anything else I can help with?",
    "I'm sorry, I am not able to book that for you today.",
)
GLITCHES = (
    "Sorry, something went wrong on my side. Could you say that again?",
    "Apologies, I lost track there. What was it you needed?",
    "Sorry, could you repeat that please?",
)


def _is_booking(call: ToolCall) -> bool:
    name = call.name.lower()
    return name.startswith("book") or (name.startswith("validate") and name.endswith("booking"))


def _say(message: str) -> SystemOutput:
    return SystemOutput(tool_call=ToolCall(name="followup", arguments={"message": message}))


class _Wrapped:
    """The rule system, with a seeded stream of our own for the changes."""

    def __init__(self) -> None:
        self.inner = RuleSystem()
        self.rng = random.Random(0)

    async def start(self, context: SystemContext) -> None:
        self.rng = random.Random(f"{context.seed}|heldout")
        await self.inner.start(context)


class RefusingSystem(_Wrapped):
    """Every booking the rule system would make is refused in words (see the module)."""

    async def respond(self, observation: Observation) -> SystemOutput:
        out = await self.inner.respond(observation)
        if out.tool_call is not None and _is_booking(out.tool_call):
            return _say(self.rng.choice(REFUSALS))
        return out


class FlakySystem(_Wrapped):
    """The rule system with glitches in about a third of its turns (see the module)."""

    async def respond(self, observation: Observation) -> SystemOutput:
        out = await self.inner.respond(observation)
        call = out.tool_call
        if call is None:
            return out
        if call.name == "followup" and self.rng.random() < 0.33:
            return _say(self.rng.choice(GLITCHES))
        args = call.arguments if isinstance(call.arguments, dict) else None
        if _is_booking(call) and args and self.rng.random() < 0.33:
            dropped = self.rng.choice(sorted(args))
            kept = {k: v for k, v in args.items() if k != dropped}
            return SystemOutput(tool_call=ToolCall(name=call.name, arguments=kept))
        return out


__all__ = ["GLITCHES", "REFUSALS", "FlakySystem", "RefusingSystem"]
