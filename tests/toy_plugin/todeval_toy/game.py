"""The toy benchmark: a host holds a secret number in [1, N]; the guesser (the agent under test)
guesses and hears "higher", "lower" or "correct". Tasks, players, one episode, the spec."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Literal

import todeval.author as td


class ToyConfig(td.GenerationSettings):
    """Everything that determines a toy run's results (hashed: a resume must match it)."""

    guesser: str = "bisect"
    host: str = "rule"
    guesser_model: str | None = None
    ids: list[str] | None = None
    protocol: Literal["standard", "strict"] = "standard"  # strict: out of range is a violation


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
    return [Task(i, f"n{n}", n, secret[i] % n + 1, n.bit_length() + 1) for n, i in ids]


@dataclass(frozen=True)
class Game:
    """The guesser's view (never the secret), its random stream, its model calls' accounting."""

    low: int
    high: int
    max_guesses: int
    seed: int
    usage: list[td.CallUsage] = field(default_factory=list)


@dataclass(frozen=True)
class Round:  # what the game master holds; guessers get .game, a privileged control all of it
    game: Game
    task: Task


Guess = int | td.JsonReply  # a number, or the model's reply that holds none (a violation)


class RuleHost:
    async def start(self, task: Task) -> None:
        self.secret = task.secret

    async def respond(self, guess: int) -> str:
        if guess == self.secret:
            return "correct"
        return "higher" if self.secret > guess else "lower"


class VagueHost(RuleHost):
    """Never says which way: under it bisect repeats itself and random beats it (a panel)."""

    async def respond(self, guess: int) -> str:
        return "correct" if guess == self.secret else "higher or lower"


class Bisect:
    """Binary search: always finds the number within the cap."""

    async def start(self, game: Game) -> None:
        self.low, self.high, self.last, self.rng = game.low, game.high, 0, random.Random(game.seed)

    def pick(self) -> int:
        return (self.low + self.high) // 2

    async def respond(self, answer: str | None) -> Guess:
        if answer == "higher":
            self.low = self.last + 1
        elif answer == "lower":
            self.high = self.last - 1
        self.last = self.pick()
        return self.last


class RandomGuess(Bisect):
    """A random number consistent with the answers so far, from the episode's own stream."""

    def pick(self) -> int:
        return self.rng.randint(self.low, self.high)


class Oracle:
    """A privileged control: handed the whole round, it names the secret at once."""

    privileged = True

    async def start(self, full: Round) -> None:
        self.secret = full.task.secret

    async def respond(self, answer: str | None) -> Guess:
        return self.secret


class LLMGuesser:
    """A model answering ``{"guess": n}``; its prompts are the templates guesser and answer."""

    def __init__(self, options: td.PlayerOptions) -> None:
        self.chat = td.JsonChat(options, {"guess": int})  # "llm guesser needs --guesser-model"

    async def start(self, game: Game) -> None:
        self.chat.say("guesser", low=game.low, high=game.high, max_guesses=game.max_guesses)
        self.game, self.left, self.last = game, game.max_guesses, ""

    async def respond(self, answer: str | None) -> Guess:
        if answer is not None:
            self.chat.say("answer", answer=answer, guess=self.last, left=self.left)
        reply = await self.chat.ask(seed=self.game.seed, usage=self.game.usage)
        if reply.value is None:
            return reply
        self.left, self.last = self.left - 1, str(reply.value["guess"])
        return int(reply.value["guess"])


class HumanGuesser(td.TerminalPlayer):
    """A person at the terminal, asked again until they type a whole number."""

    name, other, again = "guesser", "host", "please type a whole number"

    def brief(self, game: Game) -> str:
        return f"Find my whole number from {game.low} to {game.high} in {game.max_guesses} guesses."

    def read(self, text: str) -> int:
        return int(text)


class BlindGuesser:
    """The adversary family's player: from the low end, the middle or the high end, ``step`` at a
    time up or down (wrapping round the range). The skill is using "higher" and "lower", which
    it never reads: it covers ``max_guesses`` of ``high`` numbers, on average cap / range of the
    secrets (0.197 over the 30 tasks). Searched for what suits these 30 fixed secrets, the family
    finds a third of them; the band allows that. Nothing that reads the answers belongs here."""

    def __init__(self, options: td.PlayerOptions) -> None:
        params = options.params  # from the player's name (NAME?start=middle&step=3)
        self.where, self.step = params.get("start", "low"), int(params.get("step", "1"))
        self.sign = -1 if params.get("direction") == "down" else 1

    async def start(self, game: Game) -> None:
        self.low, self.span = game.low, game.high - game.low + 1
        self.next = {"low": 0, "middle": (self.span - 1) // 2, "high": self.span - 1}[self.where]

    async def respond(self, answer: str | None) -> Guess:
        guess = self.low + self.next % self.span
        self.next += self.sign * self.step
        return guess


GUESSERS = {n: f"todeval_toy.game:{c}" for n, c in {  # repeat: the lowest number every time
    "bisect": "Bisect", "random": "RandomGuess", "llm": "LLMGuesser", "human": "HumanGuesser",
    "repeat": "BlindGuesser?step=0", "oracle": "Oracle"}.items()}  # fmt: skip
GUESSER = td.Role("guesser", "guesser", object, GUESSERS, view=lambda full: full.game, action=int)
HOSTS = {"rule": "todeval_toy.game:RuleHost", "vague": "todeval_toy.game:VagueHost"}
HOST = td.Role("host", "host", object, HOSTS, view=lambda task: task)  # the host holds the secret


async def play(ep: td.Episode[ToyConfig, Task]) -> td.EpisodeRecord:
    task, guesser, host, log = ep.task, ep.players["guesser"], ep.players["host"], td.EpisodeLog()
    guesses: list[int] = []
    game = Game(1, task.high, task.max_guesses, ep.streams.seed_of("guesser"), log.usage)
    try:
        await td.guarded(GUESSER.start(guesser, Round(game, task)), "guesser")
        await td.guarded(HOST.start(host, task), "host", td.Termination.SIMULATOR_ERROR)
        answer: str | None = None
        while answer != "correct":
            if len(guesses) == task.max_guesses:
                raise td.EpisodeEnd.failure("out of guesses", td.Termination.TURN_CAP)
            log.turn += 1
            guess = await td.guarded(guesser.respond(answer), "guesser")
            if not isinstance(guess, int):
                raise log.abort("guesser", guess.format_error or "no guess", guess.raw)
            guesses.append(guess)
            log.add("guess", "guesser", guess=guess)
            if ep.config.protocol == "strict" and not 1 <= guess <= task.high:
                raise log.abort("guesser", f"{guess} is outside 1..{task.high}", str(guess))
            answer = await td.guarded(host.respond(guess), "host", td.Termination.SIMULATOR_ERROR)
            log.add("answer", "host", answer=answer)
        end = td.EpisodeEnd.success(f"found in {len(guesses)} guesses")
    except td.EpisodeEnd as exc:
        end = exc
    return ep.record(log, end, details={"secret": task.secret, "guesses": guesses})


def rescore(run: td.RunContext[ToyConfig, Task], task: Task, rec: td.EpisodeRecord) -> td.Rescored:
    """The toy's scorer, of a stored episode and of each one played (``play`` gives no metrics):
    found when the host's last answer is "correct"."""
    answers = [e.data["answer"] for e in rec.events if e.kind == "answer"]
    guesses = sum(1 for e in rec.events if e.kind == "guess")
    metrics = {"toy.success": float(answers[-1:] == ["correct"]), "toy.guesses": float(guesses)}
    return td.Rescored(metrics, labels={"ending": rec.termination or ""})


ENDINGS = [("done", "found", "#1b7837"), ("turn_cap", "out of guesses", "#c51b7d"),
           ("format_violation", "out of range", "#e08214")]  # fmt: skip
PROFILE = td.BenchmarkProfile.model_validate({
    "benchmark": "toy", "title": "toy (number guessing)", "primary": "toy.success",
    "primary_title": "Found", "success_metric": "toy.success", "cost": False,
    "columns": [{"metric": "toy.success", "title": "Found"},
                {"metric": "toy.success", "aggregate": "macro", "title": "Found"},
                {"metric": "toy.guesses", "title": "Guesses", "kind": "number"}],
    "group_noun": "range size", "better": {"toy.success": "higher", "toy.guesses": "lower"},
    "roles": [{"name": "guesser", "title": "Guesser"}, {"name": "host", "title": "Host"}],
    "labels": [{"name": "ending", "title": "How the game ended", "failure": True,
                "values": [{"value": v, "title": t, "colour": c} for v, t, c in ENDINGS]}],
    "events": {"guess": {"style": "message", "title": "Guesser", "text": "guess"},
               "answer": {"style": "message", "title": "Host", "text": "answer"}},
    "details": [{"key": "guesses", "title": "Guesses", "layout": "list"}],
    "panel": {"subject": "guesser", "varied": "host"},
    "notes": ["Found = share of games where the secret was guessed within the cap."],
})  # fmt: skip


CONTROLS = [td.Control(name=n, kind=k, description=d, metric="toy.success", low=lo, high=hi,
                       run={"guesser": n}) for n, k, d, lo, hi in [
    ("repeat", "floor", "guesses the lowest number every time", 0.0, 0.1),
    ("bisect", "ceiling", "binary search: always within the cap", 1.0, 1.0),
    ("oracle", "ceiling", "privileged: handed the secret", 1.0, 1.0)]]  # fmt: skip
FAMILY = td.AdversaryFamily(  # each point: a toy run with this guesser, the point on its name
    name="blind", seat="guesser", player="todeval_toy.game:BlindGuesser", metric="toy.success",
    description="guessers that never read the answers: start, step and direction searched",
    space={"start": ("low", "middle", "high"), "step": (1, 2, 3, 5, 8, 13),
           "direction": ("up", "down")}, high=0.4, budget=300,
)  # fmt: skip
SPEC = td.BenchmarkSpec(
    name="toy", reference="todeval_toy.game:SPEC", config=ToyConfig,
    tasks=td.Tasks(load_tasks, set_name=lambda config: "numbers"),
    roles=(td.RoleSpec("guesser", GUESSER, player_key="guesser", model_key="guesser_model"),
           td.RoleSpec("host", HOST, player_key="host")),
    episode=play, rescore=rescore, scorer_version="1", protocols=("standard", "strict"),
    profile=PROFILE, controls=CONTROLS, adversaries=(FAMILY,), prompts="todeval_toy",
)  # fmt: skip
