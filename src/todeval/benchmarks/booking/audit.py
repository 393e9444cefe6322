"""``todeval data check``: how feasible is each goal against its task set's DB?

For every goal domain we count the rows matching the final constraints (``info``; train times
as bounds) and simulate a perfect system: it picks a matching row, passes all of the row's
informable values and the goal's booking slots through the tool schema and the booking
validator. A goal is feasible when every booking domain can be booked that way (with the
``info`` values, or else the ``fail_info`` values that scoring also accepts).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from todeval.benchmarks.booking.db import VenueDatabase
from todeval.benchmarks.booking.environment import BookingEnvironment
from todeval.benchmarks.booking.messages import ActionParser, BookingRequest, SystemOutput, ToolCall
from todeval.benchmarks.booking.tasks import BookingTask, DomainGoal
from todeval.benchmarks.booking.world.of_task_set import world_of


class DomainAudit(BaseModel):
    domain: str
    matching_rows: int
    bookable: bool
    problem: str = ""


class GoalAudit(BaseModel):
    task_id: str
    group: str
    feasible: bool
    domains: list[DomainAudit]


def _goal_constraints(info: dict[str, str], compare: Mapping[str, str]) -> dict[str, Any]:
    """A goal's constraints as the DB reads them: a slot the world compares (MultiWOZ's train
    times) with its comparison."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        operator = compare.get(key, "=")
        out[key] = value if operator == "=" else {"operator": operator, "value": value}
    return out


def _try_book(
    task: BookingTask,
    domain: str,
    goal: DomainGoal,
    info: dict[str, str],
    db: VenueDatabase,
    parser: ActionParser,
) -> tuple[DomainAudit, dict[str, str] | None]:
    world = world_of(task.task_set)
    tool = {d: name for name, d in world.booking_tools.items()}[domain]
    compare = world.compare.get(domain, {})
    rows = db.select(domain, db.conditions(domain, _goal_constraints(info, compare)))
    problem = "no row matches" if not rows else ""
    for row in rows:
        args = {k: row[k] for k in world.informable[domain] if k in row}
        args.update(goal.book)
        action = parser.parse(SystemOutput(tool_call=ToolCall(name=tool, arguments=args)))
        if not isinstance(action, BookingRequest):
            problem = f"schema rejects the booking: {getattr(action, 'reason', action)}"
            continue
        env = BookingEnvironment(world, task.booking_domains, random.Random(0))
        result = env.book(domain, action.slots)
        if result.ok:
            return DomainAudit(domain=domain, matching_rows=len(rows), bookable=True), args
        problem = result.message
    audit = DomainAudit(domain=domain, matching_rows=len(rows), bookable=False, problem=problem)
    return audit, None


def _audit_domain(
    task: BookingTask, domain: str, goal: DomainGoal
) -> tuple[DomainAudit, dict[str, str] | None]:
    world = world_of(task.task_set)
    db = world.database()
    if not goal.book and not goal.fail_book:  # it only asks for information: a match will do
        compare = world.compare.get(domain, {})
        rows = db.select(domain, db.conditions(domain, _goal_constraints(goal.info, compare)))
        problem = "" if rows else "no row matches"
        return DomainAudit(
            domain=domain, matching_rows=len(rows), bookable=bool(rows), problem=problem
        ), None
    parser = ActionParser.for_task_set(task.task_set)
    audit, args = _try_book(task, domain, goal, goal.info, db, parser)
    if not audit.bookable and goal.fail_info:
        alt, alt_args = _try_book(task, domain, goal, {**goal.info, **goal.fail_info}, db, parser)
        if alt.bookable:
            return alt.model_copy(update={"matching_rows": audit.matching_rows}), alt_args
    return audit, args


def perfect_booking_arguments(task: BookingTask) -> dict[str, dict[str, str]]:
    """Booking-tool arguments a perfect system would send, per bookable goal domain."""
    out = {}
    for domain, goal in task.domains.items():
        _audit, args = _audit_domain(task, domain, goal)
        if args is not None:
            out[domain] = args
    return out


def audit_task(task: BookingTask) -> GoalAudit:
    domains = [_audit_domain(task, d, g)[0] for d, g in task.domains.items()]
    return GoalAudit(
        task_id=task.task_id,
        group=task.group,
        feasible=all(d.bookable for d in domains),
        domains=domains,
    )
