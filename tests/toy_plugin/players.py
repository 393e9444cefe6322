"""Guessers for the toy's tests, loaded as ``tests.toy_plugin.players:<Class>``."""

from __future__ import annotations

import asyncio
import os

from todeval_toy.game import Bisect, Game, Guess, RandomGuess


class SlowRandom(RandomGuess):
    """The random guesser, sleeping ``TOY_TEST_DELAY`` seconds before each guess (results are
    the same whatever the delay)."""

    async def respond(self, observation: str | None) -> Guess:
        await asyncio.sleep(float(os.environ.get("TOY_TEST_DELAY", "0")))
        return await super().respond(observation)


class CrashEveryThird(Bisect):
    """Binary search that raises on every third episode it starts (run with one episode at a
    time, that is every third task)."""

    started = 0

    async def start(self, context: Game) -> None:
        await super().start(context)
        CrashEveryThird.started += 1
        self.number = CrashEveryThird.started

    async def respond(self, observation: str | None) -> Guess:
        if self.number % 3 == 0:
            raise RuntimeError(f"guesser broke on episode {self.number}")
        return await super().respond(observation)
