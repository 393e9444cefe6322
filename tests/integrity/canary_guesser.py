"""A toy guesser on a model, played under ``--isolate`` by the canary test: the toy plug-in's
own package is not on a path the sandbox can be given (an editable install), so this module,
which needs nothing but todeval's API, stands in for it."""

from __future__ import annotations

from typing import Any

import todeval.author as td


class CanaryGuesser:
    """Asks its model for ``{"guess": n}`` with the toy's templates guesser and answer."""

    def __init__(self, options: td.PlayerOptions) -> None:
        self.chat = td.JsonChat(options, {"guess": int})

    async def start(self, game: Any) -> None:
        self.chat.say("guesser", low=game.low, high=game.high, max_guesses=game.max_guesses)
        self.game, self.left, self.last = game, game.max_guesses, ""

    async def respond(self, answer: str | None) -> int | td.JsonReply:
        if answer is not None:
            self.chat.say("answer", answer=answer, guess=self.last, left=self.left)
        reply = await self.chat.ask(seed=self.game.seed, usage=self.game.usage)
        if reply.value is None:
            return reply
        self.left, self.last = self.left - 1, str(reply.value["guess"])
        return int(reply.value["guess"])
