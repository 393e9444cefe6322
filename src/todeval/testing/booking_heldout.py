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

``PartlyRefusingSystem``
    the rule system refusing every booking of some tools only: each booking tool is refused
    or not by a seeded draw per episode and tool (about half of them), in other words than
    the refusing system's ("That booking didn't go through, I'm afraid.").

Run them as ``--system todeval.testing.booking_heldout:RefusingSystem`` (or ``:FlakySystem``,
``:PartlyRefusingSystem``).

``SlippingUser`` (the sixth set's user, ``--user todeval.testing.booking_heldout:SlippingUser``,
``?phrasing=verbatim`` as the agenda user's) is the agenda user (the pack user on a domain
pack) that misremembers one value of its goal: a seeded draw per episode picks one weekday,
number, clock time, date, area or price range of the goal's constraints or booking slots, and
the user plays the goal with that value moved (the next weekday, one more, an hour later, the
next area or price range). What it says and checks is the moved value throughout; the episode
is scored against the real goal.

``HurriedUser`` and ``SwappingSystem`` (the eighth set's): the agenda user that says done once
it has taken one booking reference, with goal domains left; and the rule system that, in a
seeded half of its episodes, books every booking one weekday later than the day it was given.

``SameGroupUser`` (the ninth set's): the agenda user that books every domain of its goal for the
party of its first domain (a goal of a table for 4 and a hotel for 2 is played as 4 and 4).

``CorrectingUser`` (the seventh set's) is the agenda user (pack user) whose first turn naming
a weekday of its goal names the next weekday instead, and whose next turn begins "Sorry, I
meant monday, not tuesday."; it plays and checks its real goal throughout.

:func:`study` reviews the held-out episodes of a fixture (``tests/fixtures/review_heldout``
and the later sets ``review_heldout2`` to ``review_heldout5``, each labelled and committed
before the review was run on it) and compares the verdicts with the hand labels: per verdict,
precision and recall with 95% Wilson intervals (``python -m todeval.testing.booking_heldout
tests/fixtures/review_heldout5`` prints that set's table of docs/user-simulators.md). The
review's verdict is the one its unverified simulator faults do not count toward (round 4).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

from pydantic import BaseModel

from todeval.benchmarks.booking.domains.cli import pack_folder
from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserContext,
    UserReply,
)
from todeval.benchmarks.booking.review import review_episode
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.booking.tasks import PACK_PREFIX, BookingTask, DomainGoal
from todeval.benchmarks.booking.users import AgendaUser
from todeval.core.records import EpisodeRecord
from todeval.dialogue.participants import PlayerOptions
from todeval.stats.proportions import wilson_interval

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


PARTIAL_REFUSALS = (
    "That booking didn't go through, I'm afraid.",
    "I'm sorry, our reservation system won't take that one at the moment.",
    "I won't be able to book that for you, sorry.",
)


class PartlyRefusingSystem(_Wrapped):
    """Bookings of about half of the booking tools are refused (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.seed = 0

    async def start(self, context: SystemContext) -> None:
        self.seed = context.seed
        await super().start(context)

    async def respond(self, observation: Observation) -> SystemOutput:
        out = await self.inner.respond(observation)
        call = out.tool_call
        if call is None or not _is_booking(call):
            return out
        if random.Random(f"{self.seed}|{call.name}|refuse").random() < 0.5:
            return _say(self.rng.choice(PARTIAL_REFUSALS))
        return out


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NEXT = {
    "area": ("north", "east", "south", "west", "centre"),
    "pricerange": ("cheap", "moderate", "expensive"),
}
_CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def slipped(slot: str, value: str) -> str | None:
    """The value a user misremembers for ``value`` (see the module), or None if none."""
    value = value.strip().lower()
    if value in _DAYS:
        return _DAYS[(_DAYS.index(value) + 1) % len(_DAYS)]
    if slot in _NEXT and value in _NEXT[slot]:
        ring = _NEXT[slot]
        return ring[(ring.index(value) + 1) % len(ring)]
    if value.isdigit() and len(value) <= 2:
        number = int(value)
        return str(number - 1 if slot == "stars" and number >= 5 else number + 1)
    clock = _CLOCK.match(value)
    if clock:
        return f"{(int(clock.group(1)) + 1) % 24:02d}:{clock.group(2)}"
    if _DATE.match(value):
        try:
            return (date.fromisoformat(value) + timedelta(days=1)).isoformat()
        except ValueError:
            return None
    return None


def misremembered(task: BookingTask, rng: random.Random) -> BookingTask:
    """``task`` with one value of one domain's constraints or booking slots moved."""
    choices = [
        (domain, part, slot, moved)
        for domain, goal in task.domains.items()
        for part in ("info", "book")
        for slot, value in getattr(goal, part).items()
        if (moved := slipped(slot, value)) is not None
    ]
    if not choices:
        return task
    domain, part, slot, moved = rng.choice(choices)
    goal = task.domains[domain]
    changed = {**getattr(goal, part), slot: moved}
    domains: dict[str, DomainGoal] = {
        **task.domains,
        domain: goal.model_copy(update={part: changed}),
    }
    return task.model_copy(update={"domains": domains})


class SlippingUser:
    """The agenda user playing its goal with one value misremembered (see the module)."""

    def __init__(self, inner: AgendaUser | None = None) -> None:
        self.inner = inner or AgendaUser()

    @classmethod
    def from_options(cls, options: PlayerOptions) -> SlippingUser:
        return cls(AgendaUser.from_options(options))

    async def start(self, context: UserContext) -> None:
        rng = random.Random(f"{context.task.task_id}|{context.seed}|slip")
        await self.inner.start(replace(context, task=misremembered(context.task, rng)))

    async def respond(self, system_message: str | None) -> UserReply:
        return await self.inner.respond(system_message)

    def __getattr__(self, name: str) -> object:  # what the game master reads after the episode
        return getattr(self.inner, name)


class CorrectingUser:
    """The agenda user naming the wrong day once and correcting itself (see the module)."""

    def __init__(self, inner: AgendaUser | None = None) -> None:
        self.inner = inner or AgendaUser()
        self.days: set[str] = set()
        self.slipped = False
        self.correction: str | None = None

    @classmethod
    def from_options(cls, options: PlayerOptions) -> CorrectingUser:
        return cls(AgendaUser.from_options(options))

    async def start(self, context: UserContext) -> None:
        self.days = {
            v.lower()
            for g in context.task.domains.values()
            for part in (g.info, g.book)
            for v in part.values()
            if v.lower() in _DAYS
        }
        self.slipped, self.correction = False, None
        await self.inner.start(context)

    async def respond(self, system_message: str | None) -> UserReply:
        reply = await self.inner.respond(system_message)
        text = reply.text
        if self.correction is not None and text != "done":
            text, self.correction = f"{self.correction} {text}", None
        elif not self.slipped and text != "done":
            for day in sorted(self.days):
                found = re.search(rf"\b{day}\b", text, re.IGNORECASE)
                if found:
                    wrong = slipped("day", day) or day
                    text = text[: found.start()] + wrong + text[found.end() :]
                    self.slipped = True
                    self.correction = f"Sorry, I meant {day}, not {wrong}."
                    break
        return UserReply(text=text, usage=reply.usage)

    def __getattr__(self, name: str) -> object:  # what the game master reads after the episode
        return getattr(self.inner, name)


class SameGroupUser:
    """The agenda user booking every domain for the first domain's party (see the module)."""

    def __init__(self, inner: AgendaUser | None = None) -> None:
        self.inner = inner or AgendaUser()

    @classmethod
    def from_options(cls, options: PlayerOptions) -> SameGroupUser:
        return cls(AgendaUser.from_options(options))

    async def start(self, context: UserContext) -> None:
        first = next(
            (g.book["people"] for g in context.task.domains.values() if "people" in g.book), None
        )
        domains = {
            name: goal.model_copy(update={"book": {**goal.book, "people": first}})
            if first is not None and "people" in goal.book
            else goal
            for name, goal in context.task.domains.items()
        }
        task = context.task.model_copy(update={"domains": domains})
        await self.inner.start(replace(context, task=task))

    async def respond(self, system_message: str | None) -> UserReply:
        return await self.inner.respond(system_message)

    def __getattr__(self, name: str) -> object:  # what the game master reads after the episode
        return getattr(self.inner, name)


class HurriedUser:
    """The agenda user that leaves once it has one booking (see the module)."""

    def __init__(self, inner: AgendaUser | None = None) -> None:
        self.inner = inner or AgendaUser()
        self.domains = 0
        self.left = False

    @classmethod
    def from_options(cls, options: PlayerOptions) -> HurriedUser:
        return cls(AgendaUser.from_options(options))

    async def start(self, context: UserContext) -> None:
        self.domains = len(context.task.domains)
        self.left = False
        await self.inner.start(context)

    async def respond(self, system_message: str | None) -> UserReply:
        reply = await self.inner.respond(system_message)
        taken = len(getattr(self.inner, "references", {}) or {})
        if not self.left and taken >= 1 and self.domains > taken and reply.text != "done":
            self.left = True
            return UserReply(text="done", usage=reply.usage)
        return UserReply(text="done" if self.left else reply.text, usage=reply.usage)

    def __getattr__(self, name: str) -> object:  # what the game master reads after the episode
        return getattr(self.inner, name)


class SwappingSystem(_Wrapped):
    """The rule system booking one weekday later than asked, in about half of its episodes
    (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False

    async def start(self, context: SystemContext) -> None:
        await super().start(context)
        self.armed = self.rng.random() < 0.5

    async def respond(self, observation: Observation) -> SystemOutput:
        out = await self.inner.respond(observation)
        call = out.tool_call
        args = call.arguments if call is not None and isinstance(call.arguments, dict) else None
        if not self.armed or call is None or not _is_booking(call) or not args:
            return out
        day = str(args.get("day", "")).lower()
        if day not in _DAYS:
            return out
        moved = {**args, "day": _DAYS[(_DAYS.index(day) + 1) % len(_DAYS)]}
        return SystemOutput(tool_call=ToolCall(name=call.name, arguments=moved))


LABELS = ("agent", "simulator", "both", "unclear")


class VerdictFigures(BaseModel):
    """One verdict's precision (of the review's calls) and recall (of the hand labels)."""

    verdict: str
    labelled: int
    called: int
    hits: int

    def _share(self, n: int) -> str:
        if n == 0:
            return "-"
        low, high = wilson_interval(self.hits, n)
        return f"{self.hits}/{n} = {self.hits / n:.3f} [{low:.3f}, {high:.3f}]"

    def precision(self) -> str:
        return self._share(self.called)

    def recall(self) -> str:
        return self._share(self.labelled)


class StudyFigures(BaseModel):
    """The review's verdicts of the held-out episodes against the hand labels."""

    episodes: int
    agree: int
    verdicts: list[VerdictFigures]
    confusion: dict[str, dict[str, int]]
    """hand label -> review verdict -> episodes"""
    disagreements: list[tuple[int, str, str]]
    """(index, hand label, review verdict) of every episode where they differ"""

    def table(self) -> str:
        """The markdown table of docs/user-simulators.md."""
        low, high = wilson_interval(self.agree, self.episodes)
        rows = [
            "| verdict | labelled | called by the review | precision [95% Wilson] "
            "| recall [95% Wilson] |",
            "|---|---|---|---|---|",
        ]
        for v in self.verdicts:
            rows.append(
                f"| `{v.verdict}` | {v.labelled} | {v.called} | {v.precision()} | {v.recall()} |"
            )
        rows.append(
            f"| all | {self.episodes} | {self.episodes} | agreement {self.agree}/{self.episodes} "
            f"= {self.agree / self.episodes:.3f} [{low:.3f}, {high:.3f}] | |"
        )
        return "\n".join(rows)


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]


def rehomed(task: BookingTask, fixture: Path | None = None) -> BookingTask:
    """``task`` with its pack folder as this checkout's: a fixture records the absolute folder
    of the checkout that made it (``pack:/somewhere/src/todeval/data/domains/NAME`` for a
    shipped pack, or a pack kept in the fixture's own folder, ``fixture/NAME``)."""
    if not task.task_set.startswith(PACK_PREFIX):
        return task
    folder = Path(task.task_set[len(PACK_PREFIX) :])
    if folder.is_dir():
        return task
    if fixture is not None and (fixture / folder.name).is_dir():
        return task.model_copy(
            update={"task_set": f"{PACK_PREFIX}{(fixture / folder.name).resolve()}"}
        )
    if folder.parent.parts[-3:] != ("todeval", "data", "domains"):
        return task
    return task.model_copy(update={"task_set": f"{PACK_PREFIX}{pack_folder(folder.name)}"})


def study(fixture: Path) -> StudyFigures:
    """Review every episode of ``fixture/episodes.jsonl`` and compare with ``labels.jsonl``."""
    labels = {
        int(str(line["index"])): str(line["label"]) for line in _lines(fixture / "labels.jsonl")
    }
    called: dict[int, str] = {}
    for line in _lines(fixture / "episodes.jsonl"):
        task = rehomed(BookingTask.model_validate(line["task"]), fixture)
        record = EpisodeRecord.model_validate(line["record"])
        called[int(str(line["index"]))] = review_episode(task, record).verdict
    if set(called) != set(labels):
        raise ValueError("the labels and the episodes do not name the same indices")
    pairs = Counter((labels[i], called[i]) for i in labels)
    verdicts = [
        VerdictFigures(
            verdict=v,
            labelled=sum(n for (label, _), n in pairs.items() if label == v),
            called=sum(n for (_, c), n in pairs.items() if c == v),
            hits=pairs[(v, v)],
        )
        for v in LABELS
    ]
    return StudyFigures(
        episodes=len(labels),
        agree=sum(n for (label, c), n in pairs.items() if label == c),
        verdicts=verdicts,
        confusion={a: {b: pairs[(a, b)] for b in LABELS} for a in LABELS},
        disagreements=[(i, labels[i], called[i]) for i in sorted(labels) if labels[i] != called[i]],
    )


def main(argv: list[str]) -> int:
    """Print the study's table, its confusion matrix and the disagreements."""
    figures = study(Path(argv[0]) if argv else Path("tests/fixtures/review_heldout"))
    print(figures.table())
    print("\nhand label -> review verdict:")
    for label, row in figures.confusion.items():
        print(f"  {label:9} " + "  ".join(f"{v} {n}" for v, n in row.items()))
    print("\ndisagreements (index, label, review):")
    for index, label, verdict in figures.disagreements:
        print(f"  #{index}: {label} -> {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


__all__ = [
    "GLITCHES",
    "LABELS",
    "PARTIAL_REFUSALS",
    "REFUSALS",
    "CorrectingUser",
    "FlakySystem",
    "HurriedUser",
    "PartlyRefusingSystem",
    "RefusingSystem",
    "SameGroupUser",
    "SlippingUser",
    "StudyFigures",
    "SwappingSystem",
    "VerdictFigures",
    "main",
    "misremembered",
    "rehomed",
    "slipped",
    "study",
]
