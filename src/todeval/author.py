"""Everything a benchmark author imports, in one place (``from todeval.author import ...``).

A benchmark declares a :class:`BenchmarkSpec` (its config, tasks, roles with their players and
views, one episode, profile and controls); the framework builds and runs the plan, gives it a
``todeval run`` command, resumes it, reports it. See ``docs/writing-a-benchmark.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes

if TYPE_CHECKING:
    from todeval.core.outcome import Outcome
    from todeval.core.records import CallUsage, EpisodeRecord, Summary
    from todeval.dialogue.chat import JsonChat
    from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, Termination, guarded
    from todeval.dialogue.human import TerminalParticipant, TerminalPlayer
    from todeval.dialogue.participants import Participant, PlayerOptions, Role, with_params
    from todeval.dialogue.prompts import PromptSet
    from todeval.dialogue.reply import JsonReply
    from todeval.dialogue.views import same_view
    from todeval.driver import RunCommand, drive
    from todeval.results.profile import BenchmarkProfile
    from todeval.runner.options import GenerationSettings, RunSettings
    from todeval.spec.build import BenchmarkSpec
    from todeval.spec.declare import AgentSeat, Episode, Rescored, RoleSpec, RunContext, Tasks
    from todeval.validation import AdversaryFamily, AdversaryJob, Control
    from todeval.validation.play import play_run

_WHERE = {
    "AdversaryFamily": "todeval.validation",
    "AdversaryJob": "todeval.validation",
    "AgentSeat": "todeval.spec.declare",
    "BenchmarkProfile": "todeval.results.profile",
    "BenchmarkSpec": "todeval.spec.build",
    "CallUsage": "todeval.core.records",
    "Control": "todeval.validation",
    "Episode": "todeval.spec.declare",
    "EpisodeEnd": "todeval.dialogue.episode",
    "EpisodeLog": "todeval.dialogue.episode",
    "EpisodeRecord": "todeval.core.records",
    "GenerationSettings": "todeval.runner.options",
    "JsonChat": "todeval.dialogue.chat",
    "JsonReply": "todeval.dialogue.reply",
    "Outcome": "todeval.core.outcome",
    "Participant": "todeval.dialogue.participants",
    "PlayerOptions": "todeval.dialogue.participants",
    "PromptSet": "todeval.dialogue.prompts",
    "Rescored": "todeval.spec.declare",
    "Role": "todeval.dialogue.participants",
    "RoleSpec": "todeval.spec.declare",
    "RunCommand": "todeval.driver",
    "RunContext": "todeval.spec.declare",
    "RunSettings": "todeval.runner.options",
    "Summary": "todeval.core.records",
    "Tasks": "todeval.spec.declare",
    "TerminalParticipant": "todeval.dialogue.human",
    "TerminalPlayer": "todeval.dialogue.human",
    "Termination": "todeval.dialogue.episode",
    "drive": "todeval.driver",
    "guarded": "todeval.dialogue.episode",
    "play_run": "todeval.validation.play",
    "same_view": "todeval.dialogue.views",
    "with_params": "todeval.dialogue.participants",
}
"""Each name's module: imported on first use, so that a plug-in's spec module (imported when
its profile is read) pulls in only what it touches."""


__getattr__ = lazy_attributes(globals(), _WHERE)


__all__ = [
    "AdversaryFamily",
    "AdversaryJob",
    "AgentSeat",
    "BenchmarkProfile",
    "BenchmarkSpec",
    "CallUsage",
    "Control",
    "Episode",
    "EpisodeEnd",
    "EpisodeLog",
    "EpisodeRecord",
    "GenerationSettings",
    "JsonChat",
    "JsonReply",
    "Outcome",
    "Participant",
    "PlayerOptions",
    "PromptSet",
    "Rescored",
    "Role",
    "RoleSpec",
    "RunCommand",
    "RunContext",
    "RunSettings",
    "Summary",
    "Tasks",
    "TerminalParticipant",
    "TerminalPlayer",
    "Termination",
    "drive",
    "guarded",
    "play_run",
    "same_view",
    "with_params",
]
