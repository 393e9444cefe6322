"""The toy benchmark: a host holds a secret number in [1, N]; the guesser (the agent under test)
guesses and hears "higher", "lower" or "correct". Tasks, players, one episode, the spec."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import Literal

from todeval.author import (
    BenchmarkProfile,
    BenchmarkSpec,
    CallUsage,
    Control,
    Episode,
    EpisodeEnd,
    EpisodeLog,
    EpisodeRecord,
    JsonChat,
    Outcome,
    PlayerOptions,
    Role,
    RoleSpec,
    RunSettings,
    Tasks,
    TerminalParticipant,
    Termination,
    guarded,
)


class ToyConfig(RunSettings):
    """Everything that determines a toy run's results (hashed: a resume must match it)."""

    guesser: str = "bisect"
    host: str = "rule"
    guesser_model: str | None = None
    ids: list[str] | None = None
    protocol: Literal["standard", "strict"] = "standard"  # strict: out of range is a violation
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None


@dataclass(frozen=True)
class Task:
    task_id: str
    group: str  # the range size: n10, n100, n1000
    high: int  # the secret is in [1, high]
    secret: int
    max_guesses: int  # binary search always needs fewer


def load_tasks(config: ToyConfig | None = None) -> list[Task]:
    """30 tasks, 10 per range size; each secret is a hash of its task id."""
    ids = [(n, f"n{n}-{i:02d}") for n in (10, 100, 1000) for i in range(10)]
    secret = {i: int.from_bytes(hashlib.sha256(i.encode()).digest()[:4], "big") for _, i in ids}
    return [Task(i, f"n{n}", n, secret[i] % n + 1, math.ceil(math.log2(n)) + 1) for n, i in ids]


@dataclass(frozen=True)
class Game:
    """The guesser's view: the range and the budget, never the secret. ``seed`` is its own
    random stream; LLM players add the accounting of their model calls to ``usage``."""

    low: int
    high: int
    max_guesses: int
    seed: int
    usage: list[CallUsage] = field(default_factory=list)


@dataclass(frozen=True)
class Round:
    """The game master's view: the game and the task, secret included. A guesser is handed
    ``round.game``; only a privileged one (the oracle control) all of it."""

    game: Game
    task: Task


@dataclass(frozen=True)
class Unreadable:  # an output that holds no guess: a format violation
    reason: str
    raw: str


class RuleHost:
    async def start(self, task: Task) -> None:
        self.secret = task.secret

    async def respond(self, guess: int) -> str:
        if guess == self.secret:
            return "correct"
        return "higher" if self.secret > guess else "lower"


class VagueHost(RuleHost):
    """Says only whether a guess is right ("higher or lower"): a host under which the ranking
    of guessers flips (bisect repeats itself; random still finds some numbers)."""

    async def respond(self, guess: int) -> str:
        return "correct" if guess == self.secret else "higher or lower"


class Bisect:
    """Binary search: always finds the number within the cap."""

    async def start(self, game: Game) -> None:
        self.low, self.high, self.last = game.low, game.high, 0

    def narrow(self, answer: str | None) -> None:
        if answer == "higher":
            self.low = self.last + 1
        elif answer == "lower":
            self.high = self.last - 1

    async def respond(self, answer: str | None) -> int | Unreadable:
        self.narrow(answer)
        self.last = (self.low + self.high) // 2
        return self.last


class RandomGuess(Bisect):
    """A random number consistent with the answers so far, from the episode's own stream."""

    async def start(self, game: Game) -> None:
        await super().start(game)
        self.rng = random.Random(game.seed)

    async def respond(self, answer: str | None) -> int | Unreadable:
        self.narrow(answer)
        self.last = self.rng.randint(self.low, self.high)
        return self.last


class Repeat(Bisect):
    """A control with no skill: guesses the lowest number every time."""

    async def respond(self, answer: str | None) -> int | Unreadable:
        return self.low


class Oracle:
    """A privileged control: handed the whole round, it names the secret at once."""

    privileged = True

    async def start(self, full: Round) -> None:
        self.secret = full.task.secret

    async def respond(self, answer: str | None) -> int | Unreadable:
        return self.secret


class LLMGuesser:
    """A model answering ``{"guess": n}``; its prompts are the templates guesser and answer."""

    SCHEMA = {"type": "object", "properties": {"guess": {"type": "integer"}},
              "required": ["guess"], "additionalProperties": False}  # fmt: skip

    def __init__(self, options: PlayerOptions) -> None:
        self.chat = JsonChat(options, self.SCHEMA, player="the llm guesser", flag="--guesser-model")

    async def start(self, game: Game) -> None:
        self.chat.say("guesser", low=game.low, high=game.high, max_guesses=game.max_guesses)
        self.game, self.left, self.last = game, game.max_guesses, ""

    async def respond(self, answer: str | None) -> int | Unreadable:
        if answer is not None:
            self.chat.say("answer", answer=answer, guess=self.last, left=self.left)
        reply = await self.chat.ask(seed=self.game.seed, usage=self.game.usage)
        if reply.value is None:
            return Unreadable(reply.format_error or "no guess", reply.raw)
        self.left, self.last = self.left - 1, str(reply.value["guess"])
        return int(reply.value["guess"])


class HumanGuesser:
    """A person at the terminal (asked again until they type a whole number)."""

    interactive = True  # the runner plays one episode at a time and prints no progress line

    async def start(self, game: Game) -> None:
        self.terminal = TerminalParticipant(name="guesser", other="host")
        await self.terminal.start(f"I hold a whole number from {game.low} to {game.high}. "
                                  f"Find it in {game.max_guesses} guesses: type one, then Enter.")  # fmt: skip

    async def respond(self, answer: str | None) -> int | Unreadable:
        text = await self.terminal.respond(answer)
        while not text.strip().lstrip("-").isdigit():
            text = await self.terminal.respond("please type a whole number")
        return int(text)


GUESSERS = {n: f"todeval_toy.game:{c}" for n, c in [("bisect", "Bisect"), ("random", "RandomGuess"),
            ("llm", "LLMGuesser"), ("human", "HumanGuesser"), ("repeat", "Repeat"), ("oracle", "Oracle")]}  # fmt: skip
GUESSER = Role("guesser", "guesser", object, GUESSERS, view=lambda full: full.game)
HOSTS = {"rule": "todeval_toy.game:RuleHost", "vague": "todeval_toy.game:VagueHost"}
HOST = Role("host", "host", object, HOSTS, view=lambda task: task)  # the host holds the secret


async def play(ep: Episode[ToyConfig, Task]) -> EpisodeRecord:
    task, guesser, host, log = ep.task, ep.players["guesser"], ep.players["host"], EpisodeLog()
    guesses: list[int] = []
    game = Game(1, task.high, task.max_guesses, ep.streams.seed_of("guesser"), log.usage)
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
            guesses.append(guess)
            log.add("guess", "guesser", guess=guess)
            if ep.config.protocol == "strict" and not 1 <= guess <= task.high:
                log.violation("guesser", f"{guess} is outside 1..{task.high}", str(guess))
                raise EpisodeEnd(Outcome.ABORTED, Termination.FORMAT_VIOLATION, "out of range")
            answer = await guarded(host.respond(guess), "host", Termination.SIMULATOR_ERROR)
            log.add("answer", "host", answer=answer)
        end = EpisodeEnd(Outcome.SUCCESS, Termination.DONE, f"found in {len(guesses)} guesses")
    except EpisodeEnd as exc:
        end = exc
    log.finish(end)
    return log.record(
        benchmark="toy", streams=ep.streams, end=end, group=task.group,
        metrics={"toy.success": float(end.outcome is Outcome.SUCCESS), "toy.guesses": len(guesses)},
        details={"high": task.high, "secret": task.secret, "guesses": guesses},
        labels={"ending": end.termination.value},
    )  # fmt: skip


ENDINGS = [("done", "found", "#1b7837"), ("turn_cap", "out of guesses", "#c51b7d"),
           ("format_violation", "out of range", "#e08214")]  # fmt: skip
PROFILE = BenchmarkProfile.model_validate({
    "benchmark": "toy", "title": "toy (number guessing)", "primary": "toy.success",
    "primary_title": "Found", "success_metric": "toy.success", "cost": False,
    "columns": [{"metric": "toy.success", "title": "Found"},
                {"metric": "toy.success", "aggregate": "macro", "title": "Found"},
                {"metric": "toy.guesses", "title": "Guesses", "kind": "number"}],
    "group_noun": "range size",
    "roles": [{"name": "guesser", "title": "Guesser"}, {"name": "host", "title": "Host"}],
    "labels": [{"name": "ending", "title": "How the game ended", "failure": True,
                "note": "found: the secret was guessed; out of guesses; out of range (strict).",
                "values": [{"value": v, "title": t, "colour": c} for v, t, c in ENDINGS]}],
    "events": {"guess": {"style": "message", "title": "Guesser", "text": "guess"},
               "answer": {"style": "message", "title": "Host", "text": "answer"},
               "violation": {"style": "alert", "title": "rule broken", "text": "reason", "pre": "raw"},
               "episode_end": {"style": "end", "title": "end", "bold": "outcome", "text": "reason"}},
    "details": [{"key": "guesses", "title": "Guesses", "layout": "list"}],
    "panel": {"subject": "guesser", "varied": "host"},
    "notes": ["Found = share of games where the secret was guessed within the cap."],
})  # fmt: skip


def _control(name: str, kind: str, what: str, low: float, high: float) -> Control:
    return Control(name=name, kind=kind, description=what, metric="toy.success", low=low,  # type: ignore[arg-type]
                   high=high, run={"guesser": name})  # fmt: skip


SPEC = BenchmarkSpec(
    name="toy",
    reference="todeval_toy.game:SPEC",
    config=ToyConfig,
    tasks=Tasks(load_tasks, set_name=lambda config: "numbers"),
    roles=(
        RoleSpec("guesser", GUESSER, player_key="guesser", model_key="guesser_model"),
        RoleSpec("host", HOST, player_key="host"),
    ),
    episode=play,
    profile=PROFILE,
    controls=(
        _control("repeat", "floor", "guesses the lowest number every time", 0.0, 0.1),
        _control("bisect", "ceiling", "binary search: always within the cap", 1.0, 1.0),
        _control("oracle", "ceiling", "privileged: handed the secret", 1.0, 1.0),
    ),
    prompts="todeval_toy",
    protocols=("standard", "strict"),
    success_metric="toy.success",
)
