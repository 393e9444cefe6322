"""Booking episodes replayed for ``todeval submit verify`` (:mod:`todeval.submission.replay`).

The episode is played again by the real :class:`~.game.GameMaster` under the recorded
protocol and rules, with the task's own goal and database and the episode's game-master
stream (booking references): the user's turns are the recorded ones, and the system's outputs
are the recorded calls, acted on as recorded (a recorded format violation is parsed again from
its raw text, so a violation the rules would not give is found). Every search result, booking
result and reference, every cap, abort and end, the scores and the details must come out as
the record has them; the first event that does not is named with its turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from todeval.benchmarks.booking.game import GameMaster, GameRules
from todeval.benchmarks.booking.messages import (
    Action,
    BookingRequest,
    DbQuery,
    FollowUp,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserContext,
    UserReply,
    Violation,
)
from todeval.benchmarks.booking.rules import GameProtocol
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.core.events import Event
from todeval.core.records import EpisodeRecord
from todeval.submission.replay import Mismatch, Replay, Replayer, RunFiles

_SYSTEM_KINDS = ("system_message", "db_query", "booking_request", "violation")
_REPLAYED = "replayed"
_RAISED = re.compile(r"^(?P<who>system|user simulator) raised (?P<type>\w+): (?P<msg>.*)$", re.S)
_CALL = re.compile(r"^(?P<name>[^()\s]+)\((?P<body>.*)\)$", re.S)


def _crash(reason: str, who: str) -> Exception | None:
    """The exception a recorded crash of ``who`` names (its reason: ``<who> raised T: msg``)."""
    match = _RAISED.match(reason)
    if match is None or match["who"] != who:
        return None
    kind = type(match["type"], (Exception,), {})
    return cast(Exception, kind(match["msg"]))


def _end_reason(reason: str) -> str | None:
    """The user's own end reason, recorded in brackets after the episode's reason."""
    match = re.search(r" \((\w+)\)$", reason)
    return match.group(1) if match else None


class _RecordedUser:
    """The user's recorded turns, said again in order."""

    def __init__(self, texts: Sequence[str], crash: Exception | None, end: str | None) -> None:
        self.texts = list(texts)
        self.crash = crash
        self._end = end

    @property
    def end_reason(self) -> str | None:
        return self._end

    async def start(self, context: UserContext) -> None:
        return None

    async def respond(self, observation: str | None) -> UserReply:
        if not self.texts:
            raise self.crash or RuntimeError("the record has no further user turn")
        return UserReply(text=self.texts.pop(0))


class _RecordedSystem:
    """The system's recorded outputs, one response per call (queued calls ride along)."""

    def __init__(self, responses: Sequence[SystemOutput], crash: Exception | None) -> None:
        self.responses = list(responses)
        self.crash = crash

    async def start(self, context: SystemContext) -> None:
        return None

    async def respond(self, observation: Observation) -> SystemOutput:
        if not self.responses:
            raise self.crash or RuntimeError("the record has no further system output")
        return self.responses.pop(0)


class _AsRecorded:
    """The run's protocol, except that a replayed call is the recorded action; a recorded
    violation is parsed again from its raw text by the real rules."""

    def __init__(self, real: GameProtocol, items: Sequence[Event]) -> None:
        self.real = real
        self.items = items

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def parse(self, call: ToolCall | None, text: str | None = None) -> Action | Violation:
        if call is None or call.name != _REPLAYED or not isinstance(call.arguments, dict):
            return self.real.parse(call, text)
        event = self.items[int(call.arguments["i"])]
        data = event.data
        if event.kind == "system_message":
            return FollowUp(message=str(data.get("text", "")))
        if event.kind == "db_query":
            return DbQuery(domain=str(data.get("domain")), constraints=dict(data["arguments"]))
        if event.kind == "booking_request":
            return BookingRequest(domain=str(data.get("domain")), slots=dict(data["arguments"]))
        raw = str(data.get("raw", ""))
        match = _CALL.match(raw)
        if match is not None:
            return self.real.parse(ToolCall(name=match["name"], arguments=match["body"]))
        return self.real.parse(None, raw)


def _responses(events: Sequence[Event]) -> tuple[list[SystemOutput], list[Event]]:
    items: list[Event] = []
    responses: list[SystemOutput] = []
    for event in events:
        if event.actor != "system" or event.kind not in _SYSTEM_KINDS:
            continue
        call = ToolCall(name=_REPLAYED, arguments={"i": len(items)})
        items.append(event)
        if event.data.get("queued") and responses:
            responses[-1].more_calls.append(call)
        else:
            responses.append(SystemOutput(tool_call=call))
    return responses, items


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _first_difference(recorded: Any, replayed: Any, where: str) -> str | None:
    """The first path at which two JSON values differ, with both values."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in list(dict.fromkeys([*recorded, *replayed])):
            if key not in recorded:
                return f"{where}.{key}: missing from the record ({_short(replayed[key])} replayed)"
            if key not in replayed:
                return f"{where}.{key}: {_short(recorded[key])} recorded, not given by the replay"
            found = _first_difference(recorded[key], replayed[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) != len(replayed):
            return f"{where}: {len(recorded)} items recorded, {len(replayed)} replayed"
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=True)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    if recorded != replayed:
        return f"{where}: {_short(recorded)} recorded, {_short(replayed)} replayed"
    return None


def _compare_events(recorded: Sequence[Event], replayed: Sequence[Event]) -> Mismatch | None:
    for rec, rep in zip(recorded, replayed, strict=False):
        if (rec.kind, rec.actor) != (rep.kind, rep.actor):
            return Mismatch(
                f"the record has {rec.kind} by {rec.actor}, the game master gives {rep.kind} "
                f"by {rep.actor}" + (f" ({_short(rep.data.get('reason'))})"
                                     if rep.kind == "episode_end" else ""),
                rec.turn,
            )  # fmt: skip
        if rec.turn != rep.turn:
            return Mismatch(f"{rec.kind} recorded in turn {rec.turn}, replayed in {rep.turn}")
        found = _first_difference(rec.data, rep.data, rec.kind)
        if found:
            return Mismatch(found, rec.turn)
    if len(recorded) > len(replayed):
        extra = recorded[len(replayed)]
        return Mismatch(
            f"the record goes on ({extra.kind}) after the game master ended it", extra.turn
        )
    if len(replayed) > len(recorded):
        more = replayed[len(recorded)]
        return Mismatch(f"the record ends before the game master's {more.kind}", more.turn)
    return None


async def _replay_episode(context: Any, task: BookingTask, record: EpisodeRecord) -> list[Mismatch]:
    cfg = context.config
    events = list(record.events)
    texts = [str(e.data.get("text", "")) for e in events if e.kind == "user_message"]
    responses, items = _responses(events)
    user = _RecordedUser(texts, _crash(record.reason, "user simulator"), _end_reason(record.reason))
    system = _RecordedSystem(responses, _crash(record.reason, "system"))
    rules = GameRules(
        max_turns=cfg.max_turns,
        max_calls_per_turn=cfg.max_calls_per_turn,
        on_violation=cfg.on_violation,
        protocol=cfg.protocol,
    )
    game = GameMaster(task, system, user, run_seed=cfg.seed, trial=record.trial, rules=rules)
    game.protocol = cast(GameProtocol, _AsRecorded(game.protocol, items))
    again = await game.play()
    found: list[Mismatch] = []
    diverged = _compare_events(events, again.events)
    if diverged is not None:
        found.append(diverged)
    for name in ("goal", "bookings", "generated_slots", "domain_scores"):
        if name in record.details or name in again.details:
            what = _first_difference(record.details.get(name), again.details.get(name), name)
            if what:
                found.append(Mismatch(what))
    if found:
        return found
    if (record.outcome, record.reason) != (again.outcome, again.reason):
        found.append(
            Mismatch(
                f"outcome {record.outcome.value} ({record.reason}) recorded, "
                f"{again.outcome.value} ({again.reason}) replayed"
            )
        )
    metric = _first_difference(record.metrics, again.metrics, "metrics")
    if metric:
        found.append(Mismatch(metric))
    for name, value in again.labels.items():
        if record.labels.get(name) != value:
            was = record.labels.get(name)
            found.append(Mismatch(f"label {name}: {was!r} recorded, {value!r} replayed"))
    return found


def _start(context: Any, files: RunFiles) -> Replayer[BookingTask]:
    protocol = context.config.protocol

    async def episode(task: BookingTask, record: EpisodeRecord) -> list[Mismatch]:
        return await _replay_episode(context, task, record)

    return Replayer(
        episode=episode,
        replays=f"every DB search and booking re-run against the task's database under "
        f"{protocol}, every violation parsed again, caps, ends and scores by the game master",
        cannot=("the user simulator's turns are taken as recorded",),
    )


REPLAY: Replay[Any, BookingTask] = Replay(start=_start, set_keys=("domain", "domain_tasks"))
"""The booking benchmark's replay (its spec's ``replay``)."""

__all__ = ["REPLAY"]
