"""Why a user simulator ended the dialogue (readable by the game master as ``end_reason``)."""

from __future__ import annotations

from enum import StrEnum


class EndReason(StrEnum):
    COMPLETED = "completed"
    """The user has a booking reference for every booking domain and asked what it wanted."""
    GAVE_UP_NO_PROGRESS = "gave_up_no_progress"
    """The dialogue made no progress for ``patience`` user turns in a row."""
    GAVE_UP_REPEATS = "gave_up_system_repeats"
    """The system sent the same message ``repeat_limit`` times in a row."""
    CORPUS_REPLAYED = "corpus_replayed"
    """The corpus user ran out of recorded user turns."""


GAVE_UP = frozenset({EndReason.GAVE_UP_NO_PROGRESS, EndReason.GAVE_UP_REPEATS})
"""The user left without what it came for: the episode scores 0 (the game master)."""
