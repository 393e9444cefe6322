"""Skill-less booking systems with parameters: the family ``todeval validate booking`` searches.

Each is a system under test like any other: it reads only the system's view -- the task set's
name, the tool definitions, the user's messages and its own tool results -- and never
understands what the user wants. Three strategies, named in issue 41:

* ``parrot`` -- copies any schema value found in the user's words into its search and booking
  arguments: a tool's enum values as whole words, a time (``HH:MM``), a number next to a word of
  its parameter's description ("7 seats"), and values of rows it has seen (names, foods,
  stations) -- then books the rows the search returns;
* ``enumerate`` -- searches with no constraint and books every row it is shown, cycling the
  booking details through every value the booking tool allows;
* ``ask-all`` -- asks the user for every parameter of every tool at once, then parrots the
  answers.

Parameters (:data:`SPACE`, every choice in order, the first the default):

* ``rows`` -- rows booked per search (the last successful booking of a domain is the one scored);
* ``book_when`` -- ``first``: on the first user turn only; ``every``: on every user turn;
  ``asked``: when the user's message says "book" or "reserve"; ``details``: when it names a
  booking detail (a day, a time, a number of people);
* ``details`` -- booking details it cannot copy: ``first`` (the first value the tool allows, a
  time 12:00, a number 1), ``random`` (drawn from the system's random stream), ``middle``;
* ``reply`` -- how it answers: ``offer`` ("How about X? Would you like me to book it?"),
  ``booked`` (the references of its bookings, then an offer), ``silent`` (one fixed line),
  ``echo`` (the user's words back), ``confirm`` (the references and what it searched with);
* ``memory`` -- ``dialogue``: values copied from every user turn so far (a later one replaces an
  earlier one); ``turn``: the current turn's only;
* ``domains`` -- ``all``: every entity it can book; ``mentioned``: the entities whose tool
  description shares a word with the user's message (every one when none does);
* ``compare`` -- ``equal``: a comparable parameter is searched with ``=``; ``guess``: a time after
  "after", "from" or "leav..." with ``>=``, after "by" or "before" with ``<=``;
* ``pick`` -- when a message holds several values of one parameter: the ``last`` or the
  ``first`` said.

The parameters ride in the system's name, ``--system 'adversary?strategy=parrot&rows=2'`` (a
parameter left out takes its first choice). :func:`play` plays one point of a family for
:mod:`todeval.validation.search`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from todeval.benchmarks.booking.messages import (
    BookingResult,
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserMessage,
)
from todeval.dialogue.participants import PlayerOptions, with_params
from todeval.errors import UsageError

if TYPE_CHECKING:
    from todeval.core.records import Summary
    from todeval.validation import AdversaryJob

STRATEGIES = ("parrot", "enumerate", "ask-all")
SPACE: dict[str, tuple[Any, ...]] = {
    "strategy": STRATEGIES,
    "rows": (1, 2, 5),
    "book_when": ("first", "every", "asked", "details"),
    "details": ("first", "random", "middle"),
    "reply": ("offer", "booked", "silent", "echo", "confirm"),
    "memory": ("dialogue", "turn"),
    "domains": ("all", "mentioned"),
    "compare": ("equal", "guess"),
    "pick": ("last", "first"),
}
"""Every parameter's choices in order (the first is the default)."""

FOLLOWUP = "followup"
_CALLS_PER_TURN = 13  # below both protocols' inner-loop caps (15 outputs; 15 calls of one kind)
_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_BOOK = re.compile(r"\b(book|booking|reserve|reservation)\b")
_LATER = ("after", "from", "leav", "depart", "earliest")
_EARLIER = ("by", "before", "arriv", "latest")


def parameters(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """``given`` with every missing parameter at its default; a one-line error for an unknown
    parameter or choice."""
    out = {name: choices[0] for name, choices in SPACE.items()}
    for name, value in (given or {}).items():
        if name not in SPACE:
            raise UsageError(
                f"adversary parameter {name!r} unknown; parameters: {', '.join(SPACE)}"
            )
        allowed = SPACE[name]
        if value not in allowed and str(value) not in {str(a) for a in allowed}:
            raise UsageError(
                f"adversary {name}={value!r}: choose one of {', '.join(map(str, allowed))}"
            )
        out[name] = next(a for a in allowed if str(a) == str(value))
    return out


def _words(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9:]+", " ", text.lower()) + " "


class _Param:
    """One tool parameter as its definition shows it."""

    def __init__(self, name: str, schema: Mapping[str, Any]) -> None:
        self.name = name
        inner = schema.get("properties", {}).get("value", {}) if "properties" in schema else {}
        self.compared = schema.get("type") == "object"
        source = inner if self.compared else schema
        self.enum: list[str] = [str(v) for v in source.get("enum", [])]
        self.time = "pattern" in source or "HH:MM" in str(schema.get("description", ""))
        description = str(schema.get("description", ""))
        self.cues = {
            w for w in re.findall(r"[a-z]+", f"{name} {description}".lower()) if len(w) > 2
        }
        counted = not self.enum and not self.time and "number" in self.cues
        self.numeric = counted or (bool(self.enum) and all(v.isdigit() for v in self.enum))


class _Tool:
    def __init__(self, definition: Mapping[str, Any]) -> None:
        fn = definition["function"]
        self.name: str = fn["name"]
        self.description: str = fn.get("description", "")
        props = fn.get("parameters", {}).get("properties", {})
        self.params = {k: _Param(k, v) for k, v in props.items()}
        self.required: list[str] = list(fn.get("parameters", {}).get("required", []))


class AdversarySystem:
    """A point of the family (see the module); its parameters ride in its name
    (``adversary?strategy=parrot&rows=2``), handed over as ``options.params``."""

    def __init__(self, options: PlayerOptions | None = None) -> None:
        self.p = parameters(options.params if options is not None else {})

    @classmethod
    def from_options(cls, options: PlayerOptions) -> AdversarySystem:
        return cls(options)

    async def start(self, context: SystemContext) -> None:
        from todeval.benchmarks.booking.world.of_task_set import world_of

        world = world_of(context.task_set)  # only to pair a search tool with its booking tool
        tools = {t["function"]["name"]: _Tool(t) for t in context.tools}
        self.search = {d: tools[n] for n, d in world.db_tools.items() if n in tools}
        self.book = {d: tools[n] for n, d in world.booking_tools.items() if n in tools}
        self.rng: random.Random = context.rng
        self.seen: dict[str, dict[str, set[str]]] = {d: {} for d in self.search}
        self.copied: dict[str, dict[str, str]] = {d: {} for d in self.search}
        self.references: dict[str, str] = {}
        self.offers: dict[str, str] = {}
        self.searched: dict[str, dict[str, Any]] = {}
        self.turn = 0
        self.bookings = 0
        self.searches = 0
        self.plan: list[ToolCall] = []
        self.user_text = ""

    # -- reading the user's words --------------------------------------------------------------
    def _copy(self, tool: _Tool, domain: str, text: str) -> dict[str, str]:
        """Values of ``tool``'s parameters found in ``text`` (whole words, the longest first)."""
        low = _words(text)
        found: dict[str, str] = {}
        shared = _shared(tool)
        for name, param in tool.params.items():
            value = self._value(param, low, shared, self.seen.get(domain, {}).get(name, set()))
            if value is not None:
                found[name] = value
        return found

    def _value(self, param: _Param, low: str, shared: set[str], seen: set[str]) -> str | None:
        if param.time:
            times = [
                (m.start(), f"{int(m.group(1)):02d}:{m.group(2)}") for m in _TIME.finditer(low)
            ]
            times = [(at, t) for at, t in times if _cued(param, low, at) or len(times) == 1]
            if not times:
                return None
            return times[0][1] if self.p["pick"] == "first" else times[-1][1]
        if param.numeric:
            for m in re.finditer(r"\b(\d{1,2})\s+([a-z]+)", low):
                allowed = m.group(1) in param.enum or not param.enum
                if allowed and _stem(m.group(2)) in {_stem(c) for c in param.cues - {"number"}}:
                    return m.group(1)
            return None
        candidates = param.enum or sorted(seen)
        best: tuple[int, str] | None = None
        for value in sorted(candidates, key=len, reverse=True):
            spelled = f" {value.lower()} "
            at = low.find(spelled) if self.p["pick"] == "first" else low.rfind(spelled)
            if not value or at < 0:
                continue
            if value in shared and not _cued(param, low, at):
                continue
            if best is None or (at < best[0] if self.p["pick"] == "first" else at > best[0]):
                best = (at, value)
        return best[1] if best else None

    # -- acting ---------------------------------------------------------------------------------
    async def respond(self, observation: Observation) -> SystemOutput:
        if isinstance(observation, UserMessage):
            return self._user_turn(observation.text)
        if isinstance(observation, DbResult):
            self._saw(observation)
            if self.plan and self.plan[0].name == "_book":
                self.plan.pop(0)
                self._book_rows(observation.domain, observation.rows)
        elif isinstance(observation, BookingResult) and observation.ok and observation.reference:
            self.references[observation.domain] = observation.reference
        return self._next()

    def _user_turn(self, text: str) -> SystemOutput:
        self.turn += 1
        self.calls = 0
        self.user_text = text
        strategy = self.p["strategy"]
        if strategy == "ask-all" and self.turn == 1:
            return _say(self._ask_all())
        domains = self._domains(text)
        for domain in self.search:
            copied = self._copy(self.search[domain], domain, text)
            booking = self._copy(self.book[domain], domain, text) if domain in self.book else {}
            copied.update({k: v for k, v in booking.items() if k not in copied})
            if self.p["memory"] == "turn":
                self.copied[domain] = copied
            else:
                self.copied[domain].update(copied)
        books = self._books_now(text)
        self.plan = []
        for domain in domains:
            search = self._search_call(domain)
            if search is None:
                continue
            self.plan.append(search)
            if books and domain in self.book:
                self.plan.append(ToolCall(name="_book", arguments={"domain": domain}))
        return self._next()

    def _books_now(self, text: str) -> bool:
        when = self.p["book_when"]
        if when == "first":
            return self.turn == 1 or (self.p["strategy"] == "ask-all" and self.turn == 2)
        if when == "every":
            return True
        if when == "asked":
            return bool(_BOOK.search(text.lower()))
        low = _words(text)
        return bool(_TIME.search(low)) or any(
            self._value(param, low, set(), set()) is not None
            for domain, tool in self.book.items()
            for name, param in tool.params.items()
            if domain in self.search and name not in self.search[domain].params and param.enum
        )

    def _domains(self, text: str) -> list[str]:
        every = list(self.search)
        if self.p["domains"] == "all":
            return every
        low = _words(text)
        hit = [
            d
            for d, tool in self.search.items()
            if any(f" {w} " in low for w in re.findall(r"[a-z]{4,}", tool.description.lower()))
            and d != "database"
        ]
        return hit or every

    def _search_call(self, domain: str) -> ToolCall | None:
        """The search it makes for ``domain``; None when it has nothing to search with (a
        search without a field is a format violation under ``clemtodd``)."""
        tool = self.search[domain]
        args: dict[str, Any] = {}
        if self.p["strategy"] == "enumerate":
            # every value in turn of the first parameter that lists its values
            for name, param in tool.params.items():
                if param.enum and not param.compared:
                    args[name] = param.enum[self.searches % len(param.enum)]
                    break
        else:
            low = _words(self.user_text)
            for name, value in self.copied[domain].items():
                found = tool.params.get(name)
                if found is None:
                    continue
                if found.compared:
                    args[name] = {"operator": self._operator(found, value, low), "value": value}
                else:
                    args[name] = value
        if not args:
            return None
        self.searches += 1
        self.searched[domain] = args
        return ToolCall(name=tool.name, arguments=args)

    def _operator(self, param: _Param, value: str, low: str) -> str:
        if self.p["compare"] == "equal" or not param.time:
            return "="
        at = low.find(value)
        before = low[max(0, at - 20) : at] if at >= 0 else ""
        if any(cue in before for cue in _LATER):
            return ">="
        if any(cue in before for cue in _EARLIER):
            return "<="
        return "="

    def _saw(self, result: DbResult) -> None:
        seen = self.seen.setdefault(result.domain, {})
        for row in result.rows:
            for key, value in row.items():
                if value and len(value) < 60:
                    seen.setdefault(key, set()).add(str(value).lower())
        if result.rows:
            first = result.rows[0]
            # what it offers: a name (or an id) of the first row, else its first value
            key = next((k for k in first if k == "name" or k.endswith("id")), next(iter(first)))
            self.offers[result.domain] = first.get(key, "")

    def _book_rows(self, domain: str, rows: list[dict[str, str]]) -> None:
        tool = self.book[domain]
        chosen = rows[: self.p["rows"]]
        calls = []
        for row in chosen:
            self.bookings += 1
            args: dict[str, Any] = {}
            for name, param in tool.params.items():
                if row.get(name):
                    args[name] = row[name]
                elif name in self.copied[domain] and self.p["strategy"] != "enumerate":
                    args[name] = self.copied[domain][name]
                elif name in tool.required or param.enum or param.time or param.numeric:
                    made = self._made_up(param)
                    if made is not None:
                        args[name] = made
            calls.append(ToolCall(name=tool.name, arguments=args))
        self.plan[0:0] = calls

    def _made_up(self, param: _Param) -> str | None:
        if self.p["strategy"] == "enumerate" and param.enum:
            return param.enum[self.bookings % len(param.enum)]
        how = self.p["details"]
        if param.enum:
            if how == "random":
                return self.rng.choice(param.enum)
            return param.enum[len(param.enum) // 2] if how == "middle" else param.enum[0]
        if param.time:
            if how == "random":
                return (
                    f"{self.rng.randrange(8, 21):02d}:{self.rng.choice(['00', '15', '30', '45'])}"
                )
            return "18:00" if how == "middle" else "12:00"
        return "2" if how == "middle" else "1"  # a number of days, seats, people

    def _next(self) -> SystemOutput:
        while self.plan and self.calls < _CALLS_PER_TURN:
            call = self.plan.pop(0)
            if call.name == "_book":
                continue  # its search was never made: nothing to book
            self.calls += 1
            return SystemOutput(tool_call=call)
        self.plan = []
        return _say(self._reply())

    def _reply(self) -> str:
        how = self.p["reply"]
        if how == "silent":
            return "How can I help you?"
        if how == "echo":
            return self.user_text or "Sorry?"
        booked = [f"your {d} is booked, reference number {r}" for d, r in self.references.items()]
        offers = [o for o in self.offers.values() if o]
        offer = f"How about {offers[-1]}? Would you like me to book it?" if offers else ""
        if how == "offer" or not booked:
            return offer or "Could you tell me more about what you need?"
        said = "; ".join(booked) + "."
        said = said[:1].upper() + said[1:]
        if how == "confirm":
            what = ", ".join(
                str(v.get("value") if isinstance(v, dict) else v)
                for args in self.searched.values()
                for v in args.values()
            )
            return f"{said} I searched for {what}." if what else said
        return f"{said} {offer}".strip()

    def _ask_all(self) -> str:
        asked: list[str] = []
        for tool in [*self.search.values(), *self.book.values()]:
            for name in tool.params:
                if name not in asked:
                    asked.append(name)
        return "Please tell me the " + ", ".join(asked) + " you want."


def _say(message: str) -> SystemOutput:
    return SystemOutput(tool_call=ToolCall(name=FOLLOWUP, arguments={"message": message}))


def _shared(tool: _Tool) -> set[str]:
    """Enum values two of a tool's parameters share ("yes", "no"): copied only with a cue."""
    count: dict[str, int] = {}
    for param in tool.params.values():
        for v in set(param.enum):
            count[v] = count.get(v, 0) + 1
    return {v for v, n in count.items() if n > 1}


def _stem(word: str) -> str:
    return word[:4]


def _cued(param: _Param, low: str, at: int) -> bool:
    """Whether a word of the parameter's name or description (its first four letters) is among
    the three words before position ``at``."""
    before = low[:at].split()[-3:]
    stems = {_stem(c) for c in param.cues}
    return any(_stem(w) in stems for w in before if len(w) > 2)


def play(job: AdversaryJob) -> Summary:
    """Play one point of a family (``job.params``) as a booking run with the agenda user; the
    family's protocol and task set come from :data:`FAMILY_RUNS`."""
    import todeval.author as td

    run = dict(FAMILY_RUNS[job.family.name])
    return td.play_run(job, {**run, "system": with_params("adversary", job.params)})


FAMILY_RUNS: dict[str, dict[str, Any]] = {}
"""Family name -> its run settings (user, protocol, domain); filled by :mod:`.systems.controls`."""


__all__ = ["FAMILY_RUNS", "SPACE", "STRATEGIES", "AdversarySystem", "parameters", "play"]
