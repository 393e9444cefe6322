"""How much the clem:todd scoring rule and todeval's value normalisation move booking accuracy.

Two measurements, offline, all episodes of a task set played in-process:

1. **Scoring rule** (test set, 117 goals, agenda user): the rule system, and the same system
   booking *by name* (restaurant/hotel: name and booking slots only; train: day, train id and
   people), scored by ``--protocol clemtodd`` (the original's rule: the booking calls' merged
   arguments) and by the row-based rule that ``strict`` uses, on the same episodes.
2. **Synthetic-set normalisation** (120 goals, ``clemtodd``): the oracle control and the rule
   system on todeval's normalised data and goals vs on the values as the original reads them
   (lower-cased only: ``free``, ``guest house``, ``8:00`` kept). Prints the values that differ
   and how many episodes' booking accuracy changes.

Run: python bench/bench_booking_clemtodd_fidelity.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from todeval.benchmarks.booking import db as db_module
from todeval.benchmarks.booking import tasks as tasks_module
from todeval.benchmarks.booking.game import GameMaster, GameRules
from todeval.benchmarks.booking.messages import SystemOutput, ToolCall
from todeval.benchmarks.booking.schema import BOOKING_TOOLS
from todeval.benchmarks.booking.scoring import score_episode
from todeval.benchmarks.booking.systems.controls import OracleSystem
from todeval.benchmarks.booking.systems.rule import RuleSystem
from todeval.benchmarks.booking.tasks import BookingTask, load_tasks
from todeval.benchmarks.booking.users.agenda import AgendaUser

_KEEP = {"restaurant": ("name",), "hotel": ("name",), "train": ("day", "trainid")}
_BOOK = ("people", "day", "time", "stay")


class ByNameRuleSystem(RuleSystem):
    """The rule system, but its bookings name the entity only (no informable slots)."""

    async def respond(self, observation: Any) -> SystemOutput:
        output = await super().respond(observation)
        call = output.tool_call
        if call is None or call.name not in BOOKING_TOOLS or not isinstance(call.arguments, dict):
            return output
        keep = _KEEP[BOOKING_TOOLS[call.name]] + _BOOK
        args = {k: v for k, v in call.arguments.items() if k.lower() in keep}
        return output.model_copy(update={"tool_call": ToolCall(name=call.name, arguments=args)})


def _play(task: BookingTask, system: Any, protocol: str) -> tuple[float, float]:
    """(booking accuracy as the protocol scores it, row-based booking accuracy)."""
    game = GameMaster(task, system, AgendaUser(), run_seed=0, rules=GameRules(protocol=protocol))
    record = asyncio.run(game.play())
    completed = record.metrics["booking.aborted"] == 0 and record.metrics["booking.turn_cap"] == 0
    rows = score_episode(task, game.env.bookings, completed).booking_accuracy
    return record.metrics["booking.booking_accuracy"], rows


def _macro(values: dict[str, list[float]]) -> float:
    return statistics.fmean(statistics.fmean(v) for v in values.values())


def scoring_rule() -> None:
    tasks = load_tasks("test")
    print("1. scoring rule, test set (117 goals, agenda user, --protocol clemtodd episodes)")
    print(f"   {'system':<18} {'clemtodd rule':>14} {'row rule':>9}   (macro over groups)")
    for name, make in (("rule", RuleSystem), ("rule, by name", ByNameRuleSystem)):
        calls: dict[str, list[float]] = defaultdict(list)
        rows: dict[str, list[float]] = defaultdict(list)
        for task in tasks:
            by_calls, by_rows = _play(task, make(), "clemtodd")
            calls[task.group].append(by_calls)
            rows[task.group].append(by_rows)
        print(f"   {name:<18} {_macro(calls):>14.3f} {_macro(rows):>9.3f}")


def _raw_value(key: str, value: Any) -> str:
    text = str(value).strip()
    return text.upper() if key == "trainid" else text.lower()


@contextmanager
def raw_values() -> Iterator[None]:
    """Data and goals read as the original reads them (no value mapping)."""
    saved = tasks_module.normalise_value
    tasks_module.normalise_value = _raw_value  # type: ignore[assignment]
    db_module.normalise_value = _raw_value  # type: ignore[assignment]
    tasks_module._load_cached.cache_clear()
    db_module.load_database.cache_clear()
    try:
        yield
    finally:
        tasks_module.normalise_value = saved
        db_module.normalise_value = saved
        tasks_module._load_cached.cache_clear()
        db_module.load_database.cache_clear()


def normalisation() -> None:
    print("2. synthetic set (120 goals), --protocol clemtodd: normalised vs as the original reads")
    normal = load_tasks("synthetic")
    with raw_values():
        raw = load_tasks("synthetic")
    changed = sum(
        a != b
        for t, r in zip(normal, raw, strict=True)
        for d in t.domains
        for part in ("info", "fail_info", "book", "fail_book")
        for a, b in zip(
            getattr(t.domains[d], part).values(), getattr(r.domains[d], part).values(), strict=True
        )
    )
    touched = sum(t.domains != r.domains for t, r in zip(normal, raw, strict=True))
    print(f"   goal values mapped: {changed} in {touched} of {len(normal)} tasks")
    for name, make in (("oracle", OracleSystem), ("rule", RuleSystem)):
        ours = [_play(t, make(), "clemtodd")[0] for t in normal]
        with raw_values():
            theirs = [_play(t, make(), "clemtodd")[0] for t in raw]
        differ = sum(a != b for a, b in zip(ours, theirs, strict=True))
        print(
            f"   {name:<7} booking accuracy normalised {statistics.fmean(ours):.3f}, "
            f"as read {statistics.fmean(theirs):.3f}; {differ}/{len(ours)} episodes differ"
        )


def main() -> int:
    scoring_rule()
    normalisation()
    return 0


if __name__ == "__main__":
    sys.exit(main())
