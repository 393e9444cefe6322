"""Everything a benchmark author imports, in one place (``from todeval.author import ...``).

A benchmark declares a :class:`BenchmarkSpec` (its config, tasks, roles with their players and
views, one episode, profile and controls); the framework builds and runs the plan, gives it a
``todeval run`` command, resumes it, reports it. See ``docs/writing-a-benchmark.md``.
"""

from todeval.core.outcome import Outcome
from todeval.core.records import CallUsage, EpisodeRecord, Summary
from todeval.dialogue.chat import JsonChat, JsonReply
from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, Termination, guarded
from todeval.dialogue.human import TerminalParticipant
from todeval.dialogue.participants import Participant, PlayerOptions, Role
from todeval.dialogue.prompts import PromptSet
from todeval.dialogue.views import same_view
from todeval.driver import RunCommand, drive
from todeval.results.profile import BenchmarkProfile
from todeval.runner.options import GenerationSettings, RunSettings
from todeval.spec.declare import AgentSeat, BenchmarkSpec, Episode, RoleSpec, RunContext, Tasks
from todeval.validation import Control

__all__ = [
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
    "Role",
    "RoleSpec",
    "RunCommand",
    "RunContext",
    "RunSettings",
    "Summary",
    "Tasks",
    "TerminalParticipant",
    "Termination",
    "drive",
    "guarded",
    "same_view",
]
