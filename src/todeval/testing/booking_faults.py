"""Booking players that make one kind of known mistake at a known rate, for measuring the
booking review (``todeval review``; issue 30, item 5).

Each wraps a correct player -- the agenda user or the rule system -- and, in a seeded share
``rate`` of the episodes (drawn from the task id, the kind and ``seed``, never from the
episode's own streams), makes its mistake once; :attr:`planted` says whether it did. Kinds:

user (the simulator)
  ``contradicts_goal``  one turn also states a value its goal rules out for a slot the goal
                        constrains ("Actually, make it expensive." when the goal says cheap)
  ``early_done``        says ``done`` at its second turn (before giving what booking needs)
  ``withheld_value``    answers every question for people, day or nights with "Please just go
                        ahead." and, once asked, never states any of them
  ``not_in_goal``       one turn also asks for an area or a price range its goal leaves open
                        ("Oh, and somewhere in the north, please.")

system (the agent under test)
  ``invented_reference`` its first reply, before any booking, ends with "Your reference number
                        is ZQ7X4K2M."
  ``gave_up``           every booking call becomes "I am sorry, I cannot book that."
  ``ignored_constraint`` the first search or booking with an area, price range or day the user
                        stated gets another value instead ("south" -> "north")
  ``missing_slots``     the first booking with people, day or nights the user stated leaves
                        that slot out (played under ``--protocol clemtodd``, whose game master
                        answers such a booking instead of aborting the episode)

:func:`measure` plays the test goals with one faulty side and reviews every record: per kind,
precision and recall of the review at the episode level with Wilson intervals.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from todeval.benchmarks.booking.game import GameRules, play_episode
from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserContext,
    UserMessage,
    UserReply,
)
from todeval.benchmarks.booking.review import mentions, review_episode
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.benchmarks.booking.users.agenda import AgendaUser
from todeval.stats.proportions import wilson_interval

USER_KINDS = ("contradicts_goal", "early_done", "withheld_value", "not_in_goal")
SYSTEM_KINDS = ("invented_reference", "gave_up", "ignored_constraint", "missing_slots")
INVENTED = "ZQ7X4K2M"

_OTHER = {
    "pricerange": {"cheap": "expensive", "moderate": "cheap", "expensive": "cheap"},
    "area": {"north": "south", "south": "north", "east": "west", "west": "east",
             "centre": "north"},
}  # fmt: skip
_SAY = {"pricerange": "Actually, make it {}.", "area": "Actually, I want one in the {}."}
_ADD = {"area": "Oh, and somewhere in the north, please.", "pricerange": "Oh, and cheap, please."}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ASK = ("how many people", "which day", "what day", "how many nights", "how long")


def _planted(task_id: str, kind: str, rate: float, seed: int) -> bool:
    return random.Random(f"{task_id}|{kind}|{seed}").random() < rate


def _contradiction(task: BookingTask) -> str | None:
    for goal in task.domains.values():
        for slot in ("pricerange", "area"):
            value = goal.info.get(slot)
            if value in _OTHER[slot]:
                return _SAY[slot].format(_OTHER[slot][value])
    return None


def _unasked(task: BookingTask) -> str | None:
    """A constraint the goal leaves open, stated ("Oh, and cheap, please."), or None."""
    for slot, text in _ADD.items():
        if not any(
            slot in part
            for goal in task.domains.values()
            for part in (goal.info, goal.fail_info, goal.book, goal.fail_book)
        ):
            return text
    return None


def _other(slot: str, value: str) -> str | None:
    if slot == "day" and value in _DAYS:
        return _DAYS[(_DAYS.index(value) + 1) % len(_DAYS)]
    return _OTHER.get(slot, {}).get(value)


class FaultyUser:
    """The agenda user with one planted mistake (see the module)."""

    def __init__(self, kind: str, rate: float = 0.5, seed: int = 0) -> None:
        if kind not in USER_KINDS:
            raise ValueError(f"user fault {kind!r}: one of {', '.join(USER_KINDS)}")
        self.kind, self.rate, self.seed = kind, rate, seed
        self.inner = AgendaUser()
        self.planted = False
        self._armed = False
        self._turn = 0
        self._extra: str | None = None

    async def start(self, context: UserContext) -> None:
        await self.inner.start(context)
        self._armed = _planted(context.task.task_id, self.kind, self.rate, self.seed)
        extra = {"contradicts_goal": _contradiction, "not_in_goal": _unasked}.get(self.kind)
        self._extra = extra(context.task) if extra is not None else None
        if extra is not None and self._extra is None:
            self._armed = False  # nothing to contradict or add: no mistake possible
        self._turn = 0

    async def respond(self, system_message: str | None) -> UserReply:
        reply = await self.inner.respond(system_message)
        self._turn += 1
        if self._armed and self.kind == "withheld_value":
            return self._withhold(system_message, reply)
        if not self._armed or self.planted:
            return reply
        added = self.kind in ("contradicts_goal", "not_in_goal")
        if added and self._turn == 2 and reply.text != "done":
            self.planted = True
            return UserReply(text=f"{reply.text} {self._extra}", usage=reply.usage)
        if self.kind == "early_done" and self._turn == 2:
            self.planted = True
            return UserReply(text="done", usage=reply.usage)
        return reply

    def _withhold(self, system_message: str | None, reply: UserReply) -> UserReply:
        """Once asked for people, day or nights, never give any of them again."""
        asked = any(q in (system_message or "").lower() for q in _ASK)
        gives = bool(set(mentions(reply.text)) & {"people", "day", "stay"})
        if reply.text != "done" and (asked or (self.planted and gives)):
            self.planted = True
            return UserReply(text="Please just go ahead.", usage=reply.usage)
        return reply

    def __getattr__(self, name: str) -> object:  # what the game master reads after the episode
        return getattr(self.inner, name)


class FaultySystem:
    """The rule system with one planted mistake (see the module)."""

    def __init__(self, kind: str, rate: float = 0.5, seed: int = 0) -> None:
        if kind not in SYSTEM_KINDS:
            raise ValueError(f"system fault {kind!r}: one of {', '.join(SYSTEM_KINDS)}")
        self.kind, self.rate, self.seed = kind, rate, seed
        self.inner = RuleSystem()
        self.planted = False
        self._armed = False
        self._booked = False
        self._said: dict[str, set[str]] = {}  # what the user stated so far, by slot

    def arm(self, task_id: str) -> None:
        """Draw whether this episode gets the mistake (the system is never told the task)."""
        self._armed = _planted(task_id, self.kind, self.rate, self.seed)

    async def start(self, context: SystemContext) -> None:
        await self.inner.start(context)

    async def respond(self, observation: Observation) -> SystemOutput:
        if isinstance(observation, UserMessage):
            for slot, values in mentions(observation.text).items():
                self._said.setdefault(slot, set()).update(values)
        out = await self.inner.respond(observation)
        call = out.tool_call
        if not self._armed or call is None:
            return out
        booking = call.name.startswith("validate") and call.name.endswith("booking")
        if self.kind in ("ignored_constraint", "missing_slots") and not self.planted:
            changed = self._change(call, booking)
            if changed is not None:
                self.planted = True
                return SystemOutput(tool_call=changed)
            return out
        if self.kind == "gave_up" and booking:
            self.planted = True
            return SystemOutput(tool_call=_say("I am sorry, I cannot book that."))
        first_reply = not self._booked and not self.planted and call.name == "followup"
        if self.kind == "invented_reference" and first_reply:
            args = call.arguments if isinstance(call.arguments, dict) else {}
            self.planted = True
            text = str(args.get("message", ""))
            return SystemOutput(tool_call=_say(f"{text} Your reference number is {INVENTED}."))
        self._booked = self._booked or booking
        return out

    def _change(self, call: ToolCall, booking: bool) -> ToolCall | None:
        """The call with a stated value changed (ignored_constraint) or a stated booking slot
        left out (missing_slots); None if it has none."""
        args = call.arguments if isinstance(call.arguments, dict) else {}
        search = call.name.startswith("retrievefrom")
        for slot in ("area", "pricerange", "day", "people", "stay"):
            value = args.get(slot)
            if not isinstance(value, str) or value.lower() not in self._said.get(slot, set()):
                continue
            if self.kind == "ignored_constraint" and (search or booking):
                other = _other(slot, value.lower())
                if other is not None:
                    return ToolCall(name=call.name, arguments={**args, slot: other})
            if self.kind == "missing_slots" and booking and slot in ("people", "day", "stay"):
                return ToolCall(
                    name=call.name, arguments={k: v for k, v in args.items() if k != slot}
                )
        return None


def _say(message: str) -> ToolCall:
    return ToolCall(name="followup", arguments={"message": message})


class KindFigures(BaseModel):
    kind: str
    side: str
    episodes: int
    planted: int
    flagged: int
    hits: int
    precision: float | None
    precision_low: float | None
    recall: float | None
    recall_low: float | None
    recall_high: float | None


@dataclass
class _Played:
    planted: bool
    flagged: bool


def measure(
    kind: str, tasks: Sequence[BookingTask], *, rate: float = 0.5, seed: int = 0
) -> KindFigures:
    """Play ``tasks`` with the agenda user and the rule system, one of them faulty in ``kind``,
    review every record, and compare the planted mistakes with the review's faults."""
    side = "simulator" if kind in USER_KINDS else "agent"

    async def one(task: BookingTask) -> _Played:
        user: AgendaUser | FaultyUser = AgendaUser()
        system: RuleSystem | FaultySystem = RuleSystem()
        if side == "simulator":
            user = FaultyUser(kind, rate, seed)
        else:
            system = FaultySystem(kind, rate, seed)
            system.arm(task.task_id)
        record = await play_episode(
            task,
            system,
            user,
            run_seed=seed,
            rules=GameRules(protocol="clemtodd" if kind == "missing_slots" else "strict"),
        )
        review = review_episode(task, record)
        planted = bool(getattr(user if side == "simulator" else system, "planted", False))
        flagged = any(f.kind == kind and f.side == side for f in review.faults)
        return _Played(planted, flagged)

    async def play_all() -> list[_Played]:
        return [await one(task) for task in tasks]

    played = asyncio.run(play_all())
    planted = sum(p.planted for p in played)
    flagged = sum(p.flagged for p in played)
    hits = sum(p.planted and p.flagged for p in played)
    p_low = wilson_interval(hits, flagged)[0] if flagged else None
    r_low, r_high = wilson_interval(hits, planted) if planted else (None, None)
    return KindFigures(
        kind=kind,
        side=side,
        episodes=len(played),
        planted=planted,
        flagged=flagged,
        hits=hits,
        precision=hits / flagged if flagged else None,
        precision_low=p_low,
        recall=hits / planted if planted else None,
        recall_low=r_low,
        recall_high=r_high,
    )


__all__ = [
    "INVENTED",
    "SYSTEM_KINDS",
    "USER_KINDS",
    "FaultySystem",
    "FaultyUser",
    "KindFigures",
    "measure",
]
