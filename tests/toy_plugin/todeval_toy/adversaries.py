"""The toy's adversary family: guessers that never read the host's answers.

The skill the toy measures is using "higher" and "lower". A guesser that ignores them can only
cover ``max_guesses`` numbers of ``high``, so on average it finds at most cap / range of the
secrets (0.5, 0.08, 0.011 for the three range sizes: 0.197 over the 30 tasks). Searching the
family for the start, step and direction that happen to suit these 30 fixed secrets raises the
best it finds (a third of them); the band allows that, and nothing that reads the answers
belongs here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import todeval.author as td

if TYPE_CHECKING:
    from todeval_toy.game import Game, Guess


class BlindGuesser:
    """From the low end, the middle or the high end, ``step`` at a time up or down (wrapping
    round the range); the host's answers are never read."""

    def __init__(self, options: td.PlayerOptions) -> None:
        params = options.params
        self.where = params.get("start", "low")
        self.step = int(params.get("step", "1"))
        self.sign = -1 if params.get("direction", "up") == "down" else 1

    async def start(self, game: Game) -> None:
        self.low, self.high = game.low, game.high
        span = self.high - self.low + 1
        first = {"low": self.low, "middle": (self.low + self.high) // 2, "high": self.high}
        self.next, self.span = first[self.where] - self.low, span

    async def respond(self, answer: str | None) -> Guess:
        guess = self.low + self.next % self.span
        self.next += self.sign * self.step
        return guess


FAMILY = td.AdversaryFamily(
    name="blind",
    description="guessers that never read the answers: start, step and direction searched",
    metric="toy.success",
    high=0.4,
    space={
        "start": ("low", "middle", "high"),
        "step": (1, 2, 3, 5, 8, 13),
        "direction": ("up", "down"),
    },
    seat="guesser",  # each point: a toy run with this guesser, the point on its name
    player="todeval_toy.adversaries:BlindGuesser",
    budget=300,
)
