"""A benchmark's tools on their own: a sandbox episode that answers tool calls outside any run.

``todeval serve tools NAME`` (:mod:`todeval.commands.serve`) serves the tools a benchmark
registered with :meth:`~todeval.registry.Registry.tool_surface`. The benchmark's factory gets
the command's :class:`SandboxOptions`, validates them (one-line usage errors) and returns a
:class:`ToolSandbox`: the tools as an MCP client lists them and a way to open a fresh sandbox
episode. Each episode answers one call at a time as the benchmark's game master would --
parsed by its rules, a violation answered as an error, anything else executed on the episode's
own state -- and returns the events its game master records for the call.

Benchmark-neutral: nothing here names a benchmark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from todeval.agents.tool_server import ToolAnswer, ToolSpec


@dataclass(frozen=True)
class SandboxOptions:
    """What the command line chose; ``None`` is the benchmark's default."""

    tasks: str | None = None
    """The benchmark's task selection (a task set, for most)."""
    task_id: str | None = None
    """The task the sandbox episodes play (default: the selection's first)."""
    protocol: str | None = None
    """The benchmark's rule set for tool calls, if it has several."""


@dataclass(frozen=True)
class SandboxCall:
    """One call answered: what the agent reads and the game master's events for it."""

    answer: ToolAnswer
    events: list[dict[str, Any]] = field(default_factory=list)
    """The events as a game master records them (``kind``, ``actor``, ``turn``, ``data``...)."""


SandboxEpisode = Callable[[str, "dict[str, Any] | str"], SandboxCall]
"""Answers one call (tool name, arguments as sent) of one sandbox episode."""


@dataclass(frozen=True)
class ToolSandbox:
    """What a benchmark serves on its own."""

    name: str
    """The server's name as MCP clients see it."""
    tools: list[ToolSpec]
    new_episode: Callable[[], SandboxEpisode]
    """A fresh sandbox episode (its own state: each token, and the stdio connection, gets one)."""
    about: dict[str, Any] = field(default_factory=dict)
    """What the episodes play (task set, task, rules), for the output file and the banner."""
