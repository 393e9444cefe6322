"""Scripted players for game-master tests (importable as tests.booking.scripted:Class)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from todeval.benchmarks.booking.db import ORIGINAL_NAMES
from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
    UserContext,
    UserReply,
)


class ScriptedUser:
    """Says the given lines in order, then ``done``."""

    def __init__(self, lines: list[str] | None = None) -> None:
        self.lines = list(lines or [])
        self.seen: list[str | None] = []

    async def start(self, context: UserContext) -> None:
        self.context = context

    async def respond(self, system_message: str | None) -> UserReply:
        self.seen.append(system_message)
        return UserReply(text=self.lines.pop(0) if self.lines else "done")


class ScriptedSystem:
    """Answers with the given outputs in order (tool name + arguments, or raw text)."""

    def __init__(self, outputs: list[tuple[str, Any] | str] | None = None) -> None:
        self.outputs = list(outputs or [])
        self.observations: list[Observation] = []

    async def start(self, context: SystemContext) -> None:
        self.context = context

    async def respond(self, observation: Observation) -> SystemOutput:
        self.observations.append(observation)
        item = self.outputs.pop(0) if self.outputs else ("followup", {"message": "ok"})
        if isinstance(item, str):
            return SystemOutput(text=item)
        name, args = item
        return SystemOutput(tool_call=ToolCall(name=name, arguments=args))


class OracleSystem:
    """Books the goal's venue straight from the DB: a 'perfect system' for runner tests.

    It peeks at nothing but the DB: it books the first row matching what the user's single
    scripted message contains (the tests' OracleUser sends the goal as JSON, worked out on
    todeval's database). Under ``clemtodd`` (the context queues calls) the game master books in
    the original's database, so a name is given as that database spells it.
    """

    async def start(self, context: SystemContext) -> None:
        self.context = context
        self.pending: list[tuple[str, dict[str, str]]] = []

    async def respond(self, observation: Observation) -> SystemOutput:
        import json

        from todeval.benchmarks.booking.schema import BOOKING_TOOLS

        delay = float(os.environ.get("TODEVAL_TEST_DELAY", "0"))
        if delay:
            await asyncio.sleep(delay)
        tools = {d: t for t, d in BOOKING_TOOLS.items()}
        if observation.kind == "user_message":
            self.pending = [(d, args) for d, args in json.loads(observation.text).items()]
        elif observation.kind == "booking_result" and not observation.ok:
            return SystemOutput(
                tool_call=ToolCall(name="followup", arguments={"message": observation.message})
            )
        if self.pending:
            domain, args = self.pending.pop(0)
            if self.context.queues_calls and "name" in args:
                args = {**args, "name": ORIGINAL_NAMES.get(args["name"], args["name"])}
            return SystemOutput(tool_call=ToolCall(name=tools[domain], arguments=args))
        return SystemOutput(tool_call=ToolCall(name="followup", arguments={"message": "booked"}))


class OracleUser:
    """Sends the perfect booking arguments for its goal as JSON, then ``done``."""

    async def start(self, context: UserContext) -> None:
        from todeval.benchmarks.booking.audit import perfect_booking_arguments

        self.message = perfect_booking_arguments(context.task)
        self.sent = False

    async def respond(self, system_message: str | None) -> UserReply:
        import json

        if self.sent:
            return UserReply(text="done")
        self.sent = True
        return UserReply(text=json.dumps(self.message))


class FlakyOracleSystem(OracleSystem):
    """The oracle, except that it raises on every third task (by the task's index)."""

    async def start(self, context: SystemContext) -> None:
        await super().start(context)
        self.crash = False

    async def respond(self, observation: Observation) -> SystemOutput:
        if observation.kind == "user_message":
            import json

            # the oracle user's first message names the goal; its venue decides the crash
            self.crash = sum(map(ord, json.dumps(json.loads(observation.text)))) % 3 == 0
        if self.crash:
            raise RuntimeError("the system under test crashed")
        return await super().respond(observation)
