"""A toy guesser whose every reply holds no number (a JSON-reply failure, as a model's would
be): its ``respond`` returns ``int | JsonReply``, a union the sandbox's reply must be read back
into, so the episode ends on the guesser's format violation, not an infrastructure error."""

from __future__ import annotations

from typing import Any

import todeval.author as td
from todeval.core.records import CallUsage


class MumblingGuesser:
    def __init__(self, options: td.PlayerOptions) -> None:
        self.options = options

    async def start(self, game: Any) -> None:
        self.game = game

    async def respond(self, answer: str | None) -> int | td.JsonReply:
        return td.JsonReply(
            format_error="no JSON object", raw="hmm, fifty?", usage=CallUsage(role="guesser")
        )
