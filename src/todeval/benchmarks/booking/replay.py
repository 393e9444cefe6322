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
from todeval.benchmarks.booking.players import USER
from todeval.benchmarks.booking.rules import GameProtocol
from todeval.benchmarks.booking.tasks import BookingTask
from todeval.core.events import Event
from todeval.core.records import EpisodeRecord
from todeval.dialogue.participants import PlayerOptions, split_params
from todeval.submission.replay import (
    Mismatch,
    Replay,
    Replayer,
    RunFiles,
    compare_events,
    first_difference,
)

_SYSTEM_KINDS = ("system_message", "db_query", "booking_request", "violation")
GAME_KINDS = frozenset(
    {"user_message", *_SYSTEM_KINDS, "db_result", "booking_result", "episode_end"}
)
"""The events the game master writes (model calls and other players' notes are not replayed)."""
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


def _scored_in(events: Sequence[Event], path: str) -> int | None:
    """The turn a detail of a domain (``goal.hotel.info...``) is scored at: the domain's last
    booking call, else the dialogue's last turn."""
    domain = path.split(".")[1].split(":")[0] if "." in path else ""
    turns = [
        e.turn for e in events if e.kind == "booking_request" and e.data.get("domain") == domain
    ]
    if turns:
        return turns[-1]
    return events[-1].turn if events else None


async def _replay_episode(
    context: Any, task: BookingTask, record: EpisodeRecord, users: Any
) -> list[Mismatch]:
    """``users``: the factory of the run's user simulator when its turns can be re-derived
    (``None``: the recorded turns are said again)."""
    cfg = context.config
    events = [e for e in record.events if e.kind in GAME_KINDS]
    texts = [str(e.data.get("text", "")) for e in events if e.kind == "user_message"]
    responses, items = _responses(events)
    user: Any = _RecordedUser(
        texts, _crash(record.reason, "user simulator"), _end_reason(record.reason)
    )
    if users is not None:
        user = users.build(PlayerOptions(role="user"))
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
    diverged = compare_events(events, [e for e in again.events if e.kind in GAME_KINDS])
    if diverged is not None:
        found.append(diverged)
    for name in ("goal", "bookings", "generated_slots", "domain_scores"):
        if name in record.details or name in again.details:
            what = first_difference(record.details.get(name), again.details.get(name), name)
            if what:
                found.append(Mismatch(what, _scored_in(events, what)))
    if found:
        return found
    if (record.outcome, record.reason) != (again.outcome, again.reason):
        found.append(
            Mismatch(
                f"outcome {record.outcome.value} ({record.reason}) recorded, "
                f"{again.outcome.value} ({again.reason}) replayed"
            )
        )
    metric = first_difference(record.metrics, again.metrics, "metrics")
    if metric:
        found.append(Mismatch(metric))
    for name, value in again.labels.items():
        if record.labels.get(name) != value:
            was = record.labels.get(name)
            found.append(Mismatch(f"label {name}: {was!r} recorded, {value!r} replayed"))
    return found


DERIVED_USERS = ("agenda", "corpus")
"""Built-in user simulators whose turns follow from the system's messages and the episode's
seeded stream alone: the replay plays them again."""


def _start(context: Any, files: RunFiles) -> Replayer[BookingTask]:
    cfg = context.config
    name = str(cfg.user)
    users = None
    if split_params(name)[0] in DERIVED_USERS and cfg.user_model is None:
        users = USER.resolve(name)

    async def episode(task: BookingTask, record: EpisodeRecord) -> list[Mismatch]:
        return await _replay_episode(context, task, record, users)

    what = f"the {name} user's turns re-derived, " if users is not None else ""
    return Replayer(
        episode=episode,
        replays=f"{what}every DB search and booking re-run against the task's database under "
        f"{cfg.protocol}, every violation parsed again, caps, ends and scores by the game master",
        cannot=() if users is not None else (f"the {name} user's turns are taken as recorded",),
    )


REPLAY: Replay[Any, BookingTask] = Replay(start=_start, set_keys=("domain", "domain_tasks"))
"""The booking benchmark's replay (its spec's ``replay``)."""

__all__ = ["REPLAY"]
