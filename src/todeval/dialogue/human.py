"""A participant a person plays in the terminal: any role that speaks text.

The other side's message is printed, the person types one line (Enter sends it). A benchmark
adapts it to its role (a person standing in for a simulated user sees the goal at the start; a
question-asker sees its background), most simply by subclassing :class:`TerminalPlayer` with
what the person is told and how a typed line becomes the role's output. A run with a terminal
participant is *interactive*: the runner plays one episode at a time, prints no progress line
over the conversation and shows each dialogue's outcome when it ends. An empty line is
ignored (the prompt is shown again); ``/quit`` or the end of input (Ctrl-D) raises
:class:`HumanQuit`: the person gave up, which ends the episode as that participant's failure.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

QUIT = "/quit"
"""What a person types to give up the dialogue."""


class HumanQuit(Exception):
    """The person gave up: typed ``/quit`` or closed the input (end of file)."""


class TerminalParticipant:
    """One person at the terminal, playing ``name`` against ``other``."""

    interactive = True

    def __init__(
        self,
        *,
        name: str,
        other: str,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        self.name = name
        self.other = other
        self._in = stdin
        self._out = stdout

    @property
    def stdin(self) -> TextIO:
        return self._in or sys.stdin

    @property
    def stdout(self) -> TextIO:
        return self._out or sys.stdout

    def show(self, text: str) -> None:
        """Print a line for the person (a brief, a notice)."""
        print(text, file=self.stdout, flush=True)

    async def start(self, brief: str | None) -> None:
        """Start an episode; ``brief`` (what the person should know: a goal) is shown."""
        self.show("")
        self.show(f"=== new dialogue with {self.other} ({QUIT} gives up) ===")
        if brief:
            self.show(brief)

    async def respond(self, observation: str | None) -> str:
        """Show the other side's message (``None``: the person speaks first) and read a line;
        an empty line is asked for again, ``/quit`` or Ctrl-D raises :class:`HumanQuit`."""
        if observation is not None:
            self.show(f"{self.other}: {observation}")
        while True:
            print(f"{self.name}> ", end="", file=self.stdout, flush=True)
            line = await asyncio.to_thread(self.stdin.readline)
            if not line:
                raise HumanQuit("the input was closed")
            text = line.rstrip("\r\n")
            if text.strip() == QUIT:
                raise HumanQuit(f"the person typed {QUIT}")
            if text.strip():
                return text
            self.show(f"(type a message and press Enter; {QUIT} gives up)")


class TerminalPlayer:
    """A player of any role that a person plays at the terminal: a benchmark's ``human``.

    Subclass it and say what the person is told when an episode starts (:meth:`brief`, from the
    role's view) and how a typed line becomes the role's output (:meth:`read`); a line it cannot
    read (a ``ValueError``) is asked for again with :attr:`again`. :attr:`name` and
    :attr:`other` are the prompt and the other side's name on the screen."""

    interactive = True
    name = "you"
    other = "other"
    again = "(that could not be read: type it again)"

    def brief(self, view: Any) -> str | None:
        """What the person is told when an episode starts (default: nothing)."""
        return None

    def read(self, text: str) -> Any:
        """The role's output from a typed line (default: the line)."""
        return text

    async def start(self, view: Any) -> None:
        self.terminal = TerminalParticipant(name=self.name, other=self.other)
        await self.terminal.start(self.brief(view))

    async def respond(self, observation: Any) -> Any:
        text = await self.terminal.respond(None if observation is None else str(observation))
        while True:
            try:
                return self.read(text)
            except ValueError:
                text = await self.terminal.respond(self.again)
