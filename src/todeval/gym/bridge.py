"""The player that stands in for the agent under test while a Gymnasium environment runs.

The environment plays the benchmark's own episode (its spec's ``episode``) in a thread with an
event loop of its own; the role under test is played by :class:`GymAgent`, which hands every
observation it is given to the environment and answers with the environment's next action. It
finds the environment's :class:`Channel` through a context variable the thread sets, so nothing
about the environment passes through the run's config.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from todeval.core.records import CallUsage
from todeval.dialogue.participants import output_type
from todeval.dialogue.reply import JsonReply

CHANNEL: contextvars.ContextVar[Channel | None] = contextvars.ContextVar(
    "todeval_gym_channel", default=None
)
"""The channel of the environment whose episode runs in this context."""
REFERENCE = "todeval.gym.bridge:GymAgent"
"""The player reference the environment names for the role under test."""
CONTROL_REFERENCE = "todeval.gym.bridge:GymControl"
"""The same for a privileged policy (a control)."""


@dataclass
class Channel:
    """Between one environment and the episode it plays: what the role sees, what it does."""

    output: type[Any] | None
    """The role's output type (a pydantic model is read from the action's JSON)."""
    reader: Callable[[str], Any] | None = None
    """The role's own reading of an action (``Role.action``), when it declares one: a text it
    cannot read (a ``ValueError``, as ``int`` raises) is the role's unreadable reply, a
    :class:`~todeval.dialogue.reply.JsonReply` with the error (a format violation)."""
    role: str = ""
    seen: queue.Queue[tuple[str, Any]] = field(default_factory=queue.Queue)
    actions: queue.Queue[str | None] = field(default_factory=queue.Queue)
    view: Any = None
    last_output: Any = None
    """The role's output read from the latest action (for a per-step signal)."""

    def parse(self, action: str) -> Any:
        """The role's output from an action: its model from JSON (plain text where the model
        has a ``text`` field and the action is no JSON object), or the text itself."""
        if self.reader is not None:
            try:
                return self.reader(action)
            except ValueError as exc:
                usage = CallUsage(role=self.role)
                return JsonReply(format_error=f"unreadable action: {exc}", raw=action, usage=usage)
        model = self.output
        if model is None or not (isinstance(model, type) and issubclass(model, BaseModel)):
            return action
        try:
            data = json.loads(action)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return model.model_validate(data)
        if "text" in model.model_fields:
            return model.model_validate({"text": action})
        return model.model_validate_json(action)


class Stopped(Exception):
    """The environment was closed or reset while its episode waited for an action."""


class GymAgent:
    """Plays the role under test with the environment's actions (see the module)."""

    def __init__(self) -> None:
        self.channel: Channel | None = None

    async def start(self, context: Any) -> None:
        self.channel = CHANNEL.get()
        if self.channel is None:
            raise RuntimeError("GymAgent plays only inside a todeval.gym environment")
        self.channel.view = context

    async def respond(self, observation: Any) -> Any:
        channel = self.channel
        if channel is None:
            raise RuntimeError("GymAgent.respond() before start()")
        channel.seen.put(("observation", observation))
        action = await _next_action(channel)
        if action is None:
            raise Stopped("the environment stopped the episode")
        channel.last_output = None
        channel.last_output = output = channel.parse(action)
        return output


async def _next_action(channel: Channel) -> str | None:
    """The environment's next action, waited for on a daemon thread (an environment left
    unclosed never keeps the interpreter from exiting)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def wait() -> None:
        action = channel.actions.get()

        def deliver() -> None:
            if not future.done():
                future.set_result(action)

        loop.call_soon_threadsafe(deliver)

    threading.Thread(target=wait, name="todeval-gym-action", daemon=True).start()
    return await future


class GymControl(GymAgent):
    """:class:`GymAgent` for a privileged policy (``AgentEnv(..., control=True)``): handed the
    full start context, as a control is, and marked as one in the manifest (never ranked)."""

    privileged = True


__all__ = [
    "CHANNEL",
    "CONTROL_REFERENCE",
    "REFERENCE",
    "Channel",
    "GymAgent",
    "GymControl",
    "Stopped",
    "output_type",
]
