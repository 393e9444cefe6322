"""The benchmark-neutral dialogue layer: participants, episode helpers, prompts, chat helpers,
human and replay participants. Benchmarks build their game masters on it; it names none of
them. See ``docs/writing-a-benchmark.md``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes

if TYPE_CHECKING:
    from todeval.dialogue.chat import JsonChat, ToolChat, json_reply
    from todeval.dialogue.episode import (
        EpisodeEnd,
        EpisodeLog,
        EpisodeStreams,
        Termination,
        guarded,
    )
    from todeval.dialogue.human import HumanQuit, TerminalParticipant, TerminalPlayer
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
    from todeval.dialogue.reply import JsonReply
    from todeval.dialogue.views import is_privileged, same_view

_WHERE = {
    "CheckedReply": "todeval.dialogue.replies",
    "ChecksSelection": "todeval.dialogue.participants",
    "ConfiguredByOptions": "todeval.dialogue.participants",
    "EpisodeEnd": "todeval.dialogue.episode",
    "EpisodeLog": "todeval.dialogue.episode",
    "EpisodeReplay": "todeval.dialogue.replay",
    "EpisodeStreams": "todeval.dialogue.episode",
    "HumanQuit": "todeval.dialogue.human",
    "JsonChat": "todeval.dialogue.chat",
    "JsonReply": "todeval.dialogue.reply",
    "Participant": "todeval.dialogue.participants",
    "PlayerFactory": "todeval.dialogue.participants",
    "PlayerOptions": "todeval.dialogue.participants",
    "PromptSet": "todeval.dialogue.prompts",
    "ReplayExhausted": "todeval.dialogue.replay",
    "ReplayParticipant": "todeval.dialogue.replay",
    "ReplyChecker": "todeval.dialogue.replies",
    "ReportsEndReason": "todeval.dialogue.participants",
    "Role": "todeval.dialogue.participants",
    "TerminalParticipant": "todeval.dialogue.human",
    "TerminalPlayer": "todeval.dialogue.human",
    "Termination": "todeval.dialogue.episode",
    "ToolChat": "todeval.dialogue.chat",
    "guarded": "todeval.dialogue.episode",
    "is_interactive": "todeval.dialogue.participants",
    "is_privileged": "todeval.dialogue.views",
    "json_reply": "todeval.dialogue.chat",
    "read_overrides": "todeval.dialogue.prompts",
    "recorded_turns": "todeval.dialogue.replay",
    "recording_by_episode": "todeval.dialogue.replay",
    "same_view": "todeval.dialogue.views",
}
"""Each name's module, imported on first use (a module of this package imports only its own
dependencies: the episode helpers need no JSON-schema checker)."""


__getattr__ = lazy_attributes(globals(), _WHERE)


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
    "TerminalPlayer",
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
