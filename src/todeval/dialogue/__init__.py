"""The benchmark-neutral dialogue layer: participants, episode helpers, prompts, chat helpers,
human and replay participants. Benchmarks build their game masters on it; it names none of
them. See ``docs/writing-a-benchmark.md``."""

from todeval.dialogue.chat import JsonChat, JsonReply, ToolChat, json_reply
from todeval.dialogue.episode import (
    EpisodeEnd,
    EpisodeLog,
    EpisodeStreams,
    Termination,
    guarded,
)
from todeval.dialogue.human import HumanQuit, TerminalParticipant
from todeval.dialogue.participants import (
    ChecksSelection,
    ConfiguredByOptions,
    Participant,
    PlayerFactory,
    PlayerOptions,
    ReportsEndReason,
    Role,
    is_interactive,
)
from todeval.dialogue.prompts import PromptSet, read_overrides
from todeval.dialogue.replay import (
    EpisodeReplay,
    ReplayExhausted,
    ReplayParticipant,
    recorded_turns,
    recording_by_episode,
)
from todeval.dialogue.replies import CheckedReply, ReplyChecker
from todeval.dialogue.views import is_privileged, same_view

__all__ = [
    "CheckedReply",
    "ChecksSelection",
    "ConfiguredByOptions",
    "EpisodeEnd",
    "EpisodeLog",
    "EpisodeReplay",
    "EpisodeStreams",
    "HumanQuit",
    "JsonChat",
    "JsonReply",
    "Participant",
    "PlayerFactory",
    "PlayerOptions",
    "PromptSet",
    "ReplayExhausted",
    "ReplayParticipant",
    "ReplyChecker",
    "ReportsEndReason",
    "Role",
    "TerminalParticipant",
    "Termination",
    "ToolChat",
    "guarded",
    "is_interactive",
    "is_privileged",
    "json_reply",
    "read_overrides",
    "recorded_turns",
    "recording_by_episode",
    "same_view",
]
