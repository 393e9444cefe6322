"""The clem:todd game master's rules (``--protocol clemtodd``), as its released code applies them.

Reference: kranti-up/clemtoddfw at commit bfefff79, files under ``clemtodd/``. Each rule below
names the file it reproduces; docs/booking.md has the table of every rule next to ``strict``.

* Data (``instancegenerator.py``, ``resources/data/en/multiwoz``): the game master searches and
  books in the original's database, the goals read as given
  (:func:`.world.of_task_set.played_world`, :func:`.db.original_database`,
  :func:`.tasks.load_tasks` ``as_given``): no value mapped, and three of MultiWOZ's
  restaurants under the SQLite database's names.
* Tool calls (``processfunccallresp.py``, ``utils.py``): the tool name must be one of the seven,
  spelled exactly; the arguments must be a JSON object. They are **not** validated against a
  schema: keys are matched case-insensitively against the fields the original knows for that
  call, unknown keys and ``None`` values are dropped, and every other value passes on in any
  case or form (``7pm``, ``people: "15"``, ``Centre``). A search with no field left, or a
  booking without a search field or without a booking field, is a violation (the episode
  aborts). A follow-up needs a string ``message`` (it may be empty).
* DB search (``dbquerybuilder.py``): values are lower-cased (train ids upper-cased) but not
  stripped or mapped (``free``, ``guest house`` stay as given); ``None``, ``""``, ``[]``, ``{}``
  and ``"donotcare"`` are skipped while ``dontcare`` and ``any`` are matched literally; stars
  and train times take an ``{operator, value}`` object, also given as a JSON string; an
  operator outside ``= > < >= <=`` returns an error message to the system; values compare as
  strings (``9:30`` is later than ``10:00``). A search whose values are all skipped returns an
  error message.
* Booking (``processbooking.py``): the mandatory keys and the goal's booking keys must be
  present, with any value (``""`` and ``dontcare`` included); the categorical lookup slots given
  must be among the schema's possible values (as listed: ``free`` is one for parking and
  internet, ``dontcare`` is none); the lookup slots given (train ``duration`` and exact train
  times included) are searched with the DB-search rules above and must match exactly one row.
* Search outside the goal (``instancegenerator.py``): the DB holds the goal's domains only, so a
  search in another domain gets an error message and no rows.
* Scoring (``processbooking.py``, the task metrics): the arguments of a domain's successful
  bookings, merged in order, are the generated slots; a goal slot absent from them fails
  (:func:`.scoring.score_episode_from_calls`).
* Inner loop (``master.py``): DB searches and bookings are counted while consecutive; the 16th
  consecutive call of one kind aborts, and the count restarts when the kind changes.
* Several calls in one response (``dialogue_systems/monolithicsys/monollm.py``): the game
  master queues them (see :mod:`.game`).
* End of the dialogue (``master.py``): the whole reply, stripped and lower-cased, is ``done``,
  ``done,`` or ``done.``; only an empty reply aborts (a whitespace-only one is passed on).
"""

from __future__ import annotations

import json
from typing import Any

from todeval.benchmarks.booking.db import MAX_ROWS, Condition
from todeval.benchmarks.booking.environment import Booking, BookingEnvironment, new_reference
from todeval.benchmarks.booking.messages import (
    Action,
    BookingRequest,
    BookingResult,
    DbQuery,
    DbResult,
    FollowUp,
    ToolCall,
    Violation,
)
from todeval.benchmarks.booking.schema import (  # the original's field tables
    BOOKING_FIELDS as BOOKING_FIELDS,
)
from todeval.benchmarks.booking.schema import FOLLOWUP
from todeval.benchmarks.booking.schema import LOOKUP_KEYS as LOOKUP_KEYS
from todeval.benchmarks.booking.schema import SEARCH_FIELDS as SEARCH_FIELDS
from todeval.benchmarks.booking.world.model import World
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core import safejson

OPERATOR_KEYS = ("stars", "arriveby", "leaveat")
OPERATORS = ("=", ">", "<", ">=", "<=")
SKIPPED_VALUES: tuple[Any, ...] = (None, "", [], {}, "donotcare")
DONE_REPLIES = frozenset({"done", "done,", "done."})
CONSECUTIVE_CAP = 15
"""At most this many consecutive DB searches (or bookings) are executed; one more aborts."""


def is_done(text: str) -> bool:
    """``master.py``: the user's whole reply is ``done`` (any case, optionally ``,``/``.``)."""
    return text.lower().strip() in DONE_REPLIES


def _raw(call: ToolCall) -> str:
    args = call.arguments
    if isinstance(args, str):
        return f"{call.name}({args})"
    try:
        safejson.check_depth(args)
        return f"{call.name}({json.dumps(args, ensure_ascii=False)})"
    except safejson.JsonDepthError as exc:
        return f"{call.name}(<arguments {exc}>)"


def _known(arguments: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {k.lower(): v for k, v in arguments.items() if k.lower() in fields and v is not None}


def parse_call(
    call: ToolCall | None, text: str | None = None, world: World | None = None
) -> Action | Violation:
    """One tool call as the original's response processing reads it (no schema validation);
    ``world``: MultiWOZ's unless a domain pack's."""
    world = world or world_of("test")
    if call is None:
        return Violation(reason="no tool call", raw=text or "")
    raw = _raw(call)
    name = call.name
    if name != FOLLOWUP and name not in world.db_tools and name not in world.booking_tools:
        return Violation(reason=f"unknown tool {name!r}", raw=raw)
    args: Any = call.arguments
    try:
        if isinstance(args, str):
            args = safejson.loads(args)
        else:
            safejson.check_depth(args)
    except safejson.JsonDepthError as exc:
        return Violation(reason=f"arguments {exc}", raw=raw)
    except json.JSONDecodeError as exc:
        return Violation(reason=f"arguments are not valid JSON ({exc.msg})", raw=raw)
    if not isinstance(args, dict):
        return Violation(reason="arguments are not a JSON object", raw=raw)
    if name == FOLLOWUP:
        message = args.get("message")
        if not isinstance(message, str):
            return Violation(reason="follow-up without a message string", raw=raw)
        return FollowUp(message=message)
    if name in world.db_tools:
        domain = world.db_tools[name]
        fields = _known(args, world.clemtodd_search[domain])
        if not fields:
            return Violation(reason="no search field in the DB query", raw=raw)
        return DbQuery(domain=domain, constraints=fields)
    domain = world.booking_tools[name]
    search = _known(args, world.clemtodd_search[domain])
    book = _known(args, world.clemtodd_booking[domain])
    if not args or not search or not book:
        part = "search" if not search else "booking"
        return Violation(reason=f"no {part} field in the booking call", raw=raw)
    return BookingRequest(domain=domain, slots={**search, **book})


def search_conditions(
    constraints: dict[str, Any], world: World | None = None
) -> list[Condition] | str:
    """``dbquerybuilder.py``: the WHERE conditions of one search, or its error message."""
    operator_keys = OPERATOR_KEYS if world is None else world.operator_keys()
    upper = frozenset({"trainid"}) if world is None else world.upper_slots
    where: dict[str, Any] = {}
    for key, value in constraints.items():
        if (isinstance(value, str) and key not in operator_keys) or isinstance(value, int):
            where[key.lower()] = str(value).lower()
        else:
            where[key.lower()] = value
    out: list[Condition] = []
    for key, value in where.items():
        if any(value == skipped for skipped in SKIPPED_VALUES):
            continue
        processed = value
        if key in operator_keys and isinstance(value, str):
            try:
                processed = json.loads(value)
            except ValueError:
                processed = value
        if isinstance(processed, dict) and "operator" in processed and "value" in processed:
            operator = processed["operator"]
            if operator not in OPERATORS:
                return (
                    f"Invalid operator {operator!r} for {key}: use one of {', '.join(OPERATORS)}."
                )
            text = str(processed["value"]).lower()
        else:
            operator = "="
            text = str(processed).upper() if key in upper else str(processed).lower()
        out.append(Condition(key, str(operator), text))
    if not out:
        return "The query has no constraint to search with."
    return out


def search(env: BookingEnvironment, domain: str, constraints: dict[str, Any]) -> DbResult:
    """A DB search under the original's rules (at most 5 rows and the total)."""
    if domain not in env.goal_domains:
        # instancegenerator.py builds the episode's DB for the goal's domains only
        message = f"There is no {domain} database in this dialogue."
        return DbResult(domain=domain, query={}, rows=[], total=0, message=message)
    conditions = search_conditions(constraints, env.world)
    if isinstance(conditions, str):
        return DbResult(domain=domain, query={}, rows=[], total=0, message=conditions)
    total, rows = env.db.select_first(domain, conditions, MAX_ROWS)
    query = {c.column: {"operator": c.operator, "value": c.value} for c in conditions}
    if not total:
        message = f"No {domain} in the database matches these constraints."
    elif total <= MAX_ROWS:
        message = f"{total} {domain} result(s) found."
    else:
        message = f"{total} {domain} results match; showing the first {MAX_ROWS}."
    return DbResult(domain=domain, query=query, rows=rows, total=total, message=message)


def _flat(value: Any) -> str:
    """``processbooking.py`` ``_prepare_gen_slots``: an object's value, as lower-cased text."""
    if isinstance(value, dict):
        values = list(value.values())
        return str(values[1] if len(values) > 1 else value).lower()
    return str(value).lower()


def book(
    env: BookingEnvironment,
    domain: str,
    arguments: dict[str, Any],
    goal_book_keys: list[str] | tuple[str, ...] = (),
) -> BookingResult:
    """A booking attempt under the original's validation (``processbooking.py``)."""

    def fail(reason: str) -> BookingResult:
        return BookingResult(domain=domain, ok=False, message=f"Booking failed: {reason}")

    if domain not in env.booking_domains:
        return fail(f"booking is not available for {domain} in this dialogue.")
    given = {k.lower(): v for k, v in arguments.items()}
    slots = {k: _flat(v) for k, v in given.items()}
    world = env.world
    for required in (world.mandatory[domain], goal_book_keys):
        missing = [k for k in required if k not in slots]
        if missing:
            return fail(f"missing slots: {', '.join(missing)}.")
    lookup_keys = world.clemtodd_lookup[domain]
    lookup = [k for k in slots if k in lookup_keys]
    if not lookup:
        return fail(f"give at least one of {', '.join(lookup_keys)}.")
    invalid = []
    for key in lookup:
        allowed = world.accepted.get(f"{domain}-{key}")
        if allowed and slots[key] not in allowed:
            invalid.append(key)
    if invalid:
        return fail(f"invalid values for: {', '.join(invalid)}.")
    conditions = search_conditions({k: given[k] for k in lookup}, world)
    if isinstance(conditions, str):
        return fail(f"no {domain} in the database matches the booking details.")
    total, rows = env.db.select_first(domain, conditions, 1)
    if not total:
        return fail(f"no {domain} in the database matches the booking details.")
    if total > 1:
        return fail(f"{total} {domain} entries match the booking details.")
    row = rows[0]
    reference = new_reference(env.rng)
    env.bookings[domain] = Booking(
        domain=domain,
        reference=reference,
        info={k: row[k] for k in world.informable[domain] if k in row},
        book={k: slots[k] for k in world.book_slots[domain] if k in slots},
        reqt={k: slots[k] for k in world.optional_attributes[domain] if k in slots},
        arguments=dict(slots),
    )
    # processbooking.py keeps the call's own details as the generated slots, updating the
    # domain's earlier ones; the task metrics are computed on them (see :mod:`.scoring`)
    env.generated[domain] = {**env.generated.get(domain, {}), **slots}
    return BookingResult(
        domain=domain,
        ok=True,
        reference=reference,
        message=f"Booking confirmed. Reference number: {reference}.",
    )
