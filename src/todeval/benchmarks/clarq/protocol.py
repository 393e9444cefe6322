"""What flows between the ClarQ game master, the provider ("Jax") and the seeker.

The game master owns the task's :class:`~todeval.benchmarks.clarq._tasks.ResponseTree`: a
provider never mutates it, it *decides* -- which nodes to release (by label) and what to say --
and the game master checks the decision (a released label must be available) and releases.
The same decision type is what the provider audit compares with the original provider's,
turn by turn (teacher-forced: the reference history and the reference unlocked set).

Roles:

* ``provider``: :class:`Provider` -- answers every seeker message with a :class:`ProviderTurn`;
* ``seeker``: :class:`Seeker` -- the agent under test; reads the provider's message, returns its
  next utterance (``Goodbye`` / ``再见`` ends the dialogue under the ``clarq`` protocol).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from todeval.benchmarks.clarq._tasks import Background, ClarqTask, ResponseNode
from todeval.benchmarks.clarq._text import Language
from todeval.core.records import CallUsage

GREETINGS: dict[Language, str] = {"en": "Jax: what can help you?", "zh": "Jax: 有什么可以帮助你？"}
"""The provider's fixed opening message (the original's)."""

GOODBYES: dict[Language, str] = {"en": "Goodbye", "zh": "再见"}
"""What ends a dialogue: matched case-sensitively under ``clarq`` (the original), without case
under ``strict``."""

MAX_MESSAGES = 22
"""The dialogue stops once the transcript (greeting included) holds more than this many
messages: at most 24 -- 12 provider messages with the greeting, 12 seeker messages."""

PROTOCOLS = ("clarq", "strict")
"""The turn rules a game master plays by (the first is the default). ``clarq``: the original's
(case-sensitive goodbye, the message cap, the provider's "enough information" reply passed on);
``strict``: a goodbye in any case, and an ``enough`` turn reaches the seeker as
:data:`NEUTRAL_REPLIES` (a reply that releases nothing and does not say the seeker is done)."""

NEUTRAL_REPLIES: dict[Language, str] = {
    "en": "Jax: Don't worry about that part; it won't stand in your way. Just carry on with what "
    "you already know.",
    "zh": "Jax: 这一点不用担心，它不会妨碍你完成任务。按你已经知道的去做就好。",
}
"""What the seeker hears instead of an ``enough`` turn under the ``strict`` protocol: word for
word the reply to any detail question that releases nothing (the canned ``unanswerable``), so
a seeker cannot tell "nothing is left" from "that was not it" (a test keeps them equal)."""


class Decision(StrEnum):
    """What a provider turn did: the classes the provider audit compares."""

    GATE_PASS = "gate_pass"  # first seeker turn is about the task: response 0 released
    APOLOGY = "apology"  # first seeker turn is not about the task: the gate stays
    RELEASE = "release"  # one or more required responses released verbatim
    NO_RELEASE = "no_release"  # a reply that reveals nothing (types 1, 3, 4, 5, 6)
    ENOUGH = "enough"  # "you have already collected enough information" (types 2/3, none left)


class SeekerKind(StrEnum):
    """The six-way classification of a seeker utterance (the original's types 1..6)."""

    WHOLE_TASK = "whole_task"  # 1: asks or confirms about the whole task
    ANSWERABLE = "answerable"  # 2: a clear detail question an available node answers
    UNANSWERABLE = "unanswerable"  # 3: a clear detail question no available node answers
    REPEAT = "repeat"  # 4: repeats an answered question
    UNRELATED = "unrelated"  # 5: chat unrelated to the task
    VAGUE = "vague"  # 6: a vague or ambiguous question


class ProviderTurn(BaseModel):
    """One provider decision and its message."""

    model_config = ConfigDict(extra="forbid")

    decision: Decision
    message: str = Field(description="what the provider says, with the 'Jax: ' prefix")
    released: list[str] = Field(
        default_factory=list, description="labels of the released nodes, in release order"
    )
    kind: SeekerKind | None = Field(None, description="how the seeker's utterance was classified")
    note: str = Field("", description="why, in a few words (a pass that fired, a score)")


@dataclass
class ProviderView:
    """What a provider sees when it answers: the task (with purposes), the transcript so far
    (greeting first, the seeker's newest message last), which nodes are available now, and
    whether the gate is still closed (response 0 not yet given)."""

    task: ClarqTask
    history: Sequence[str]
    available: Sequence[ResponseNode]
    released: Sequence[ResponseNode]
    gate_open: bool
    usage: list[CallUsage] = field(default_factory=list)  # model calls are appended here
    protocol: str = PROTOCOLS[0]  # under strict an ``enough`` turn reaches the seeker neutral

    @property
    def question(self) -> str:
        return self.history[-1]

    @property
    def lang(self) -> Language:
        return self.task.lang


@dataclass(frozen=True)
class SeekerContext:
    """What the game master knows when a seeker starts: the whole task (its response tree, node
    texts and purposes), the greeting, the seeker's seed and the trial. Only a privileged
    seeker (the ``oracle`` control) is handed this; every other seeker gets its
    :func:`seeker_view`."""

    task: ClarqTask
    greeting: str
    seed: int
    usage: list[CallUsage] = field(default_factory=list)
    trial: int = 0  # which episode of the task (a replayed seeker looks its turns up by it)

    @property
    def lang(self) -> Language:
        return self.task.lang

    @property
    def background(self) -> Background:
        return self.task.background


@dataclass(frozen=True)
class SeekerView:
    """What a seeker under test is handed at the start: the task's id (to look a recording up),
    its language, its background (role, task, items, skills, scenes: what the paper's seeker is
    told), the provider's greeting, its seed and the trial. Never a node's text or purpose."""

    task_id: str
    lang: Language
    background: Background
    greeting: str
    seed: int
    usage: list[CallUsage] = field(default_factory=list)  # model calls are appended here
    trial: int = 0


def seeker_view(context: SeekerContext) -> SeekerView:
    """The seeker role's view of the full start context."""
    return SeekerView(
        task_id=context.task.task_id,
        lang=context.lang,
        background=context.task.background.model_copy(deep=True),
        greeting=context.greeting,
        seed=context.seed,
        usage=context.usage,
        trial=context.trial,
    )


@runtime_checkable
class Provider(Protocol):
    """The agent holding the response tree."""

    async def respond(self, view: ProviderView) -> ProviderTurn: ...


@runtime_checkable
class Seeker(Protocol):
    """The agent under test: asks until it has what it needs, then says goodbye."""

    async def start(self, context: SeekerView) -> None: ...

    async def respond(self, provider_message: str) -> str: ...
