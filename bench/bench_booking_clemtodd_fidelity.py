"""How much the clem:todd scoring rule and todeval's value normalisation move booking accuracy.

Two measurements, offline, all episodes of a task set played in-process:

1. **Scoring rule** (test set, 117 goals, agenda user): the rule system, and the same system
   booking *by name* (restaurant/hotel: name and booking slots only; train: day, train id and
   people), scored by ``--protocol clemtodd`` (the original's rule: the booking calls' merged
   arguments) and by the row-based rule that ``strict`` uses, on the same episodes.
2. **Synthetic-set values** (120 goals, ``clemtodd``): the oracle control and the rule system
   on the values as the original reads them (what ``clemtodd`` plays: goals and database
   lower-cased only, ``free``, ``guest house``, ``8:00`` kept) vs on todeval's normalised goals
   and database (what ``strict`` reads, and what ``clemtodd`` played before issue 44). Prints
   the values that differ and how many episodes' booking accuracy changes.

Run: python bench/bench_booking_clemtodd_fidelity.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections import defaultdict
from typing import Any

from todeval.benchmarks.booking.db import load_database, original_database
from todeval.benchmarks.booking.game import GameMaster, GameRules, episode_environment
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


def _play(
    task: BookingTask, system: Any, protocol: str, *, normalised_db: bool = False
) -> tuple[float, float]:
    """(booking accuracy as the protocol scores it, row-based booking accuracy);
    ``normalised_db``: the game master searches todeval's normalised database whatever the
    protocol."""
    game = GameMaster(task, system, AgendaUser(), run_seed=0, rules=GameRules(protocol=protocol))
    if normalised_db:
        game.env = episode_environment(task, game.streams, "strict")
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


def _db_values_mapped() -> int:
    """Synthetic DB values todeval's normalisation changes (the original's rows against ours)."""
    ours, theirs = load_database("synthetic"), original_database("synthetic")
    return sum(
        a != b
        for domain in ours.domains
        for row, raw in zip(ours.rows(domain), theirs.rows(domain), strict=True)
        for a, b in zip(row.values(), raw.values(), strict=True)
    )


def normalisation() -> None:
    print("2. synthetic set (120 goals), --protocol clemtodd: as the original reads vs normalised")
    raw = load_tasks("synthetic", as_given=True)  # what the runner plays under clemtodd
    normal = load_tasks("synthetic")
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
    print(
        f"   values mapped by the normalisation: {_db_values_mapped()} in the DB, "
        f"{changed} in {touched} of {len(normal)} goals"
    )
    for name, make in (("oracle", OracleSystem), ("rule", RuleSystem)):
        as_read = [_play(t, make(), "clemtodd")[0] for t in raw]
        ours = [_play(t, make(), "clemtodd", normalised_db=True)[0] for t in normal]
        differ = sum(a != b for a, b in zip(ours, as_read, strict=True))
        print(
            f"   {name:<7} booking accuracy as the original reads {statistics.fmean(as_read):.3f}, "
            f"normalised {statistics.fmean(ours):.3f}; {differ}/{len(ours)} episodes differ"
        )


def main() -> int:
    scoring_rule()
    normalisation()
    return 0


if __name__ == "__main__":
    sys.exit(main())
