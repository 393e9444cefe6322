"""The booking tools on their own (``todeval serve tools booking``): a sandbox episode.

The six DB and booking tools of a task set (``--tasks``, default ``test``; or a domain pack's
tools and shipped tasks: ``--tasks car-rental`` or a pack folder), with the schemas built-in
systems get; ``followup`` is not served. A sandbox episode plays one task
(``--task-id``, default the set's first) under one rule set (``--protocol``, default
``clemtodd``) on a fresh DB built as the game master builds it for that task (run seed 0, trial
0). Every call is handled as the game master handles a system output in a run: parsed by the
protocol from ``SystemOutput(tool_call=ToolCall(name, arguments))``; a violation is recorded
and answered as a tool error (``call rejected: REASON``) -- the sandbox episode goes on; a DB
search or booking is run and recorded by :func:`~.game.play_action` and answered with the JSON
a built-in system reads. No turns, hence no inner-loop cap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from todeval.agents.sandbox import SandboxCall, SandboxOptions, ToolSandbox
from todeval.agents.tool_server import ToolAnswer
from todeval.benchmarks.booking.domains.cli import pack_folder, shipped_packs
from todeval.benchmarks.booking.domains.tasks import load_pack_tasks
from todeval.benchmarks.booking.game import episode_environment, play_action
from todeval.benchmarks.booking.llm_systems.agent_system import (
    SERVED_NAME,
    booking_tools,
    called_over_mcp,
)
from todeval.benchmarks.booking.llm_systems.base import result_content
from todeval.benchmarks.booking.messages import FollowUp, SystemOutput, ToolCall, Violation
from todeval.benchmarks.booking.rules import PROTOCOLS, get_protocol
from todeval.benchmarks.booking.tasks import TASK_SETS, BookingTask, load_tasks, select_tasks
from todeval.benchmarks.booking.world.model import pack_task_set
from todeval.dialogue.episode import EpisodeLog, EpisodeStreams
from todeval.errors import choice_error

DEFAULT_TASK_SET = "test"
RUN_SEED = 0
TRIAL = 0


def tool_sandbox(options: SandboxOptions) -> ToolSandbox:
    """The booking tool sandbox for ``options`` (one-line usage errors for bad choices)."""
    task_set = named = options.tasks or DEFAULT_TASK_SET
    protocol = options.protocol or PROTOCOLS[0]
    if task_set in TASK_SETS:  # as a run loads them (under clemtodd: as the original reads)
        tasks = load_tasks(task_set, as_given=protocol == "clemtodd")
    else:  # a domain pack (a folder or a shipped pack's name) and the tasks it ships
        if task_set not in shipped_packs() and not Path(task_set).is_dir():
            raise choice_error("task set", task_set, [*TASK_SETS, *shipped_packs(), "PACK_DIR"])
        folder = pack_folder(task_set)
        tasks = load_pack_tasks(folder)
        task_set = pack_task_set(folder)
    if protocol not in PROTOCOLS:
        raise choice_error("protocol", protocol, PROTOCOLS)
    task = select_tasks(tasks, [options.task_id])[0] if options.task_id else tasks[0]
    return ToolSandbox(
        name=SERVED_NAME,
        tools=booking_tools(task_set),
        new_episode=lambda: SandboxEpisode(task, protocol).call,
        about={"task_set": named, "task_id": task.task_id, "protocol": protocol},
    )


class SandboxEpisode:
    """One sandbox episode: a fresh DB and bookings for ``task``, and its event log."""

    def __init__(self, task: BookingTask, protocol: str) -> None:
        self.task = task
        self.protocol = get_protocol(protocol, task.task_set)
        streams = EpisodeStreams(RUN_SEED, task.task_id, TRIAL)
        self.env = episode_environment(task, streams, protocol)
        self.log = EpisodeLog()

    def call(self, name: str, arguments: dict[str, Any] | str) -> SandboxCall:
        name = called_over_mcp(name)  # followup is not served, as in a run
        output = SystemOutput(tool_call=ToolCall(name=name, arguments=arguments))
        first = len(self.log.events)
        action = self.protocol.parse(output.tool_call, output.text)
        if isinstance(action, FollowUp):  # unreachable with the name above; never played
            action = Violation(reason="the followup tool is not served", raw=name)
        if isinstance(action, Violation):
            self.log.violation("system", action.reason, action.raw)
            answer = ToolAnswer(text=f"call rejected: {action.reason}", is_error=True)
        else:
            result = play_action(self.log, self.protocol, self.env, self.task, action)
            answer = ToolAnswer(text=result_content(result))
        events = [e.model_dump(mode="json") for e in self.log.events[first:]]
        return SandboxCall(answer=answer, events=events)
