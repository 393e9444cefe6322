"""The toy's rules: a host holds a secret number in [1, N]; the guesser (the agent under test)
guesses and hears "higher", "lower" or "correct". Tasks, roles, players and one episode."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from todeval.backends import ChatMessage
from todeval.backends.sampling import Sampling
from todeval.core.outcome import Outcome
from todeval.core.records import CallUsage, EpisodeRecord
from todeval.dialogue import (
    EpisodeEnd,
    EpisodeLog,
    EpisodeStreams,
    Participant,
    PlayerOptions,
    ReplyChecker,
    Role,
    TerminalParticipant,
    Termination,
    guarded,
    json_reply,
    same_view,
)

BENCHMARK = "toy"
PROTOCOLS = ("standard", "strict")  # strict: a guess outside the range is a violation


@dataclass(frozen=True)
class Task:
    task_id: str
    high: int  # the secret is in [1, high]
    secret: int

    @property
    def group(self) -> str:
        return f"n{self.high}"

    @property
    def max_guesses(self) -> int:  # binary search always needs fewer
        return math.ceil(math.log2(self.high)) + 1


def load_tasks() -> list[Task]:
    """30 tasks, 10 per range size; each secret is a hash of its task id."""
    tasks = []
    for high in (10, 100, 1000):
        for i in range(10):
            task_id = f"n{high}-{i:02d}"
            digest = hashlib.sha256(task_id.encode()).digest()
            tasks.append(Task(task_id, high, int.from_bytes(digest[:4], "big") % high + 1))
    return tasks


@dataclass(frozen=True)
class Game:
    """What the guesser is told at the start. ``seed`` is its own random stream; LLM players
    append the accounting of their model calls to ``usage``."""

    low: int
    high: int
    max_guesses: int
    seed: int
    usage: list[CallUsage] = field(default_factory=list)


@dataclass(frozen=True)
class Round:
    """What the game master knows when a guesser starts: the game and the task, secret included.
    Guessers are handed its :func:`guesser_view`; only a privileged one (the oracle) all of it."""

    game: Game
    task: Task


def guesser_view(full: Round) -> Game:
    return full.game


@dataclass(frozen=True)
class Unreadable:
    """An output that holds no guess: a format violation."""

    reason: str
    raw: str


@runtime_checkable
class Guesser(Participant[Game, str | None, int | Unreadable], Protocol):
    """``start(game)``, then ``respond(the host's last answer, None at first) -> guess``."""


@runtime_checkable
class Host(Participant[Task, int, str], Protocol):
    """``start(task)``, then ``respond(guess) -> "higher" | "lower" | "correct"`` (a vague
    host says ``"higher or lower"``: wrong, without saying which way)."""


class RuleHost:
    async def start(self, context: Task) -> None:
        self.secret = context.secret

    async def respond(self, observation: int) -> str:
        if observation == self.secret:
            return "correct"
        return "higher" if self.secret > observation else "lower"


class VagueHost(RuleHost):
    """Says only whether a guess is right: "higher or lower", never which way. Bisect then
    repeats its first guess; a random guesser still finds some numbers -- a host under which
    the ranking of guessers flips (the toy's simulator panel)."""

    async def respond(self, observation: int) -> str:
        return "correct" if observation == self.secret else "higher or lower"


class Bisect:
    """Binary search: always finds the number within the cap."""

    async def start(self, context: Game) -> None:
        self.low, self.high, self.last = context.low, context.high, 0

    def narrow(self, answer: str | None) -> None:
        if answer == "higher":
            self.low = self.last + 1
        elif answer == "lower":
            self.high = self.last - 1

    async def respond(self, observation: str | None) -> int | Unreadable:
        self.narrow(observation)
        self.last = (self.low + self.high) // 2
        return self.last


class RandomGuess(Bisect):
    """A random number consistent with the answers so far, from the episode's own stream."""

    async def start(self, context: Game) -> None:
        await super().start(context)
        self.rng = random.Random(context.seed)

    async def respond(self, observation: str | None) -> int | Unreadable:
        self.narrow(observation)
        self.last = self.rng.randint(self.low, self.high)
        return self.last


class Repeat(Bisect):
    """A control with no skill: guesses the lowest number every time."""

    async def respond(self, observation: str | None) -> int | Unreadable:
        return self.low


class Oracle:
    """A privileged control: handed the task, it names the secret at once (the ceiling)."""

    privileged = True

    async def start(self, context: Round) -> None:
        self.secret = context.task.secret

    async def respond(self, observation: str | None) -> int | Unreadable:
        return self.secret


GUESS_SCHEMA = {
    "type": "object",
    "properties": {"guess": {"type": "integer"}},
    "required": ["guess"],
    "additionalProperties": False,
}


class LLMGuesser:
    """A model answering ``{"guess": n}``; its prompts are the templates guesser and answer."""

    def __init__(self, options: PlayerOptions) -> None:
        self.model = options.require_model("the llm guesser", "--guesser-model")
        self.prompts = options.require_prompts()
        self.sampling = Sampling(options.constrained, options.temperature, options.max_tokens)
        self.checker = ReplyChecker(GUESS_SCHEMA)

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMGuesser:
        return cls(options)

    async def start(self, context: Game) -> None:
        text = self.prompts.render(
            "guesser",
            low=str(context.low),
            high=str(context.high),
            max_guesses=str(context.max_guesses),
        )
        self.messages = [ChatMessage(role="user", content=text)]
        self.game, self.left, self.last = context, context.max_guesses, ""

    async def respond(self, observation: str | None) -> int | Unreadable:
        if observation is not None:
            text = self.prompts.render(
                "answer", answer=observation, guess=self.last, left=str(self.left)
            )
            self.messages.append(ChatMessage(role="user", content=text))
        reply = await json_reply(
            self.model,
            self.sampling,
            self.messages,
            self.checker,
            role="guesser",
            seed=self.game.seed,
            usage=self.game.usage,
        )
        self.messages.append(ChatMessage(role="assistant", content=reply.raw))
        if reply.value is None:
            return Unreadable(reply.format_error or "no guess", reply.raw)
        self.left, self.last = self.left - 1, str(reply.value["guess"])
        return int(reply.value["guess"])


class HumanGuesser:
    """A person at the terminal (asked again until they type a whole number)."""

    interactive = True  # the runner plays one episode at a time and prints no progress line

    def __init__(self) -> None:
        self.terminal = TerminalParticipant(name="guesser", other="host")

    async def start(self, context: Game) -> None:
        await self.terminal.start(
            f"I hold a whole number from {context.low} to {context.high}. "
            f"Find it in {context.max_guesses} guesses: type one and press Enter."
        )

    async def respond(self, observation: str | None) -> int | Unreadable:
        text = await self.terminal.respond(observation)
        while not text.strip().lstrip("-").isdigit():
            text = await self.terminal.respond("please type a whole number")
        return int(text)


GUESSER: Role[Guesser] = Role(
    "guesser",
    "guesser",
    Guesser,
    {
        "bisect": "todeval_toy.game:Bisect",
        "random": "todeval_toy.game:RandomGuess",
        "llm": "todeval_toy.game:LLMGuesser",
        "human": "todeval_toy.game:HumanGuesser",
        "repeat": "todeval_toy.game:Repeat",
        "oracle": "todeval_toy.game:Oracle",
    },
    view=guesser_view,  # the range and the budget, never the secret
)
HOST: Role[Host] = Role(
    "host",
    "host",
    Host,
    {"rule": "todeval_toy.game:RuleHost", "vague": "todeval_toy.game:VagueHost"},
    view=same_view,  # the host holds the task, secret included: that is its role
)


async def play_episode(
    task: Task, guesser: Guesser, host: Host, streams: EpisodeStreams, protocol: str
) -> EpisodeRecord:
    log = EpisodeLog()
    guesses: list[int] = []
    game = Game(1, task.high, task.max_guesses, streams.seed_of("guesser"), log.usage)
    try:
        await guarded(
            GUESSER.start(guesser, Round(game, task)), "guesser", Termination.SYSTEM_ERROR
        )
        await guarded(HOST.start(host, task), "host", Termination.SIMULATOR_ERROR)
        answer: str | None = None
        while answer != "correct":
            if len(guesses) == task.max_guesses:
                raise EpisodeEnd(Outcome.FAILURE, Termination.TURN_CAP, "out of guesses")
            log.turn += 1
            guess = await guarded(guesser.respond(answer), "guesser", Termination.SYSTEM_ERROR)
            if isinstance(guess, Unreadable):
                log.violation("guesser", guess.reason, guess.raw)
                raise EpisodeEnd(Outcome.ABORTED, Termination.FORMAT_VIOLATION, guess.reason)
            if not isinstance(guess, int):  # a broken player: its own failure
                raise EpisodeEnd(Outcome.SYSTEM_ERROR, Termination.SYSTEM_ERROR, f"guess {guess!r}")
            guesses.append(guess)
            log.add("guess", "guesser", guess=guess)
            if protocol == "strict" and not 1 <= guess <= task.high:
                log.violation("guesser", f"{guess} is outside 1..{task.high}", str(guess))
                raise EpisodeEnd(Outcome.ABORTED, Termination.FORMAT_VIOLATION, "out of range")
            answer = await guarded(host.respond(guess), "host", Termination.SIMULATOR_ERROR)
            log.add("answer", "host", answer=answer)
        end = EpisodeEnd(Outcome.SUCCESS, Termination.DONE, f"found in {len(guesses)} guesses")
    except EpisodeEnd as exc:
        end = exc
    log.finish(end)
    return log.record(
        benchmark=BENCHMARK,
        streams=streams,
        end=end,
        group=task.group,
        metrics={"toy.success": float(end.outcome is Outcome.SUCCESS), "toy.guesses": len(guesses)},
        details={"high": task.high, "secret": task.secret, "guesses": guesses},
        labels={"ending": end.termination.value},
    )
