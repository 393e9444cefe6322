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
import sys
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from todeval.benchmarks.booking.messages import Observation, SystemContext, SystemOutput, ToolCall
from todeval.benchmarks.booking.review import review_episode
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.core.records import EpisodeRecord
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


def study(fixture: Path) -> StudyFigures:
    """Review every episode of ``fixture/episodes.jsonl`` and compare with ``labels.jsonl``."""
    labels = {
        int(str(line["index"])): str(line["label"]) for line in _lines(fixture / "labels.jsonl")
    }
    called: dict[int, str] = {}
    for line in _lines(fixture / "episodes.jsonl"):
        task = BookingTask.model_validate(line["task"])
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
    "REFUSALS",
    "FlakySystem",
    "RefusingSystem",
    "StudyFigures",
    "VerdictFigures",
    "main",
    "study",
]
