"""The labeller role and its built-in players.

A labeller starts once per dialogue with a :class:`LabellerContext` (the track, the public
context, its seed, the baselines fitted without this dialogue) and answers one
:class:`TurnView` per labelled turn with a :class:`LabelOutput` (the ids read from its output,
or ``None`` when the output could not be read, plus the raw text). What a labeller is given is
all it may know: the public context and the utterances up to the turn -- never the buyer's
target price or CaSiNo's participant info, which are not even loaded into these objects.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from todeval.backends import ChatMessage
from todeval.backends.sampling import Sampling
from todeval.benchmarks.bargain.baselines import Fitted
from todeval.benchmarks.bargain.data import Track, Utterance
from todeval.benchmarks.bargain.parser import classify
from todeval.core.records import CallUsage
from todeval.dialogue import Participant, PlayerOptions, ReplyChecker, Role, json_reply
from todeval.errors import UsageError

LABELS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"labels": {"type": "array", "items": {"type": "string"}}},
    "required": ["labels"],
    "additionalProperties": False,
}
"""What a labeller is asked for (and what constrained decoding enforces)."""
_READ_SCHEMA: dict[str, Any] = {**LABELS_SCHEMA, "additionalProperties": True}


def labels_checker() -> ReplyChecker:
    """Reads an answer: ``labels`` must be a list of strings; any other key is ignored (and
    recorded by :func:`read_labels`), never a failed turn."""
    return ReplyChecker(_READ_SCHEMA)


def read_labels(value: dict[str, Any] | None, raw: str, error: str | None) -> LabelOutput:
    """A checked answer as the labeller's output: its ids and the keys it ignored."""
    if value is None:
        return LabelOutput(ids=None, raw=raw, error=error or "no labels")
    ignored = sorted(k for k in value if k != "labels")
    return LabelOutput(ids=[str(x) for x in value["labels"]], raw=raw, ignored=ignored)


@dataclass(frozen=True)
class LabellerView:
    """What a labeller under test is handed at the start of a dialogue: the track, the
    dialogue's id, the whole label space, the public context, its seed (and the list its model
    calls are appended to). Never a gold label, never an example from the evaluation set."""

    track: Track
    dialogue_id: str
    labels: dict[str, str]  # id -> meaning, the whole label space
    context: tuple[tuple[str, str], ...]
    seed: int
    usage: list[CallUsage] = field(default_factory=list)


@dataclass(frozen=True)
class LabellerContext:
    """What the game master knows at the start of a dialogue: the labeller's view and the
    baselines cross-fitted on the *other* dialogues of the evaluation set (their gold labels).
    Only a privileged player -- a built-in baseline, a control -- is handed it."""

    view: LabellerView
    fitted: Fitted

    @property
    def track(self) -> Track:
        return self.view.track

    @property
    def dialogue_id(self) -> str:
        return self.view.dialogue_id

    @property
    def labels(self) -> dict[str, str]:
        return self.view.labels

    @property
    def context(self) -> tuple[tuple[str, str], ...]:
        return self.view.context

    @property
    def seed(self) -> int:
        return self.view.seed

    @property
    def usage(self) -> list[CallUsage]:
        return self.view.usage


def labeller_view(full: LabellerContext) -> LabellerView:
    """The labeller role's view: everything but the cross-fitted baselines."""
    return full.view


class TurnView(BaseModel):
    """One turn to label, as the labeller sees it."""

    index: int
    speaker: str
    dialogue: list[Utterance]  # up to and including the turn's utterance
    candidates: list[str]

    @property
    def text(self) -> str:
        return self.dialogue[-1].text


class LabelOutput(BaseModel):
    ids: list[str] | None
    raw: str = ""
    error: str | None = None
    ignored: list[str] = []  # keys of the answer besides "labels" (ignored, recorded)


@runtime_checkable
class Labeller(Participant[LabellerView, TurnView, LabelOutput], Protocol):
    """``start(context)`` once per dialogue, then ``respond(turn) -> output`` per turn."""


LABELLER: Role[Labeller] = Role(
    "labeller",
    "labeller",
    Labeller,
    {
        "llm": "todeval.benchmarks.bargain.labellers:LLMLabeller",
        "gold": "todeval.benchmarks.bargain.labellers:GoldLabeller",
        "garbage": "todeval.benchmarks.bargain.labellers:GarbageLabeller",
        "random": "todeval.benchmarks.bargain.labellers:RandomLabeller",
        "majority": "todeval.benchmarks.bargain.labellers:MajorityLabeller",
        "keyword": "todeval.benchmarks.bargain.labellers:KeywordLabeller",
        "parser": "todeval.benchmarks.bargain.labellers:ParserLabeller",
        "agent": "todeval.benchmarks.bargain.agent_labeller:AgentLabeller",
        "copy-example": "todeval.benchmarks.bargain.labellers:CopyExampleLabeller",
        "prior": "todeval.benchmarks.bargain.textfree:PriorLabeller",
        "text-blind": "todeval.benchmarks.bargain.textfree:TextBlindLabeller",
    },
    view=labeller_view,
)
BASELINES = ("random", "majority", "keyword", "parser")


class _Base:
    async def start(self, context: LabellerView) -> None:
        self.context = context


class _Fitted:
    """A built-in baseline fitted on the other dialogues' gold labels: privileged (a control,
    handed the full :class:`LabellerContext`, never ranked beside labellers under test)."""

    privileged = True

    async def start(self, context: LabellerContext) -> None:
        self.context = context


class GoldLabeller(_Fitted):
    """Copies the gold (the ceiling control): the plan hands it the gold through
    ``options.privileged["gold"]`` (dialogue id -> turn index -> labels), which only a
    privileged player receives."""

    def __init__(self, options: PlayerOptions) -> None:
        self.gold: dict[str, dict[int, list[str]]] = dict(options.privileged.get("gold", {}))

    @classmethod
    def from_options(cls, options: PlayerOptions) -> GoldLabeller:
        return cls(options)

    async def respond(self, observation: TurnView) -> LabelOutput:
        ids = self.gold.get(self.context.dialogue_id, {}).get(observation.index, [])
        return LabelOutput(ids=list(ids), raw=str(ids))


class GarbageLabeller(_Base):
    """Answers something no reader can parse (the failure rate's floor)."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        return LabelOutput(ids=None, raw="~~ lorem ipsum ~~", error="not a JSON object")


class RandomLabeller(_Fitted):
    """Draws m ids uniformly without replacement from the candidates, m from the training
    label-count distribution (capped at the list's size); seeded per dialogue and turn."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        rng = random.Random(f"{self.context.seed}:{observation.index}")
        counts = self.context.fitted.label_counts
        m = rng.choices([c for c, _ in counts], weights=[p for _, p in counts])[0]
        ids = rng.sample(observation.candidates, min(m, len(observation.candidates)))
        return LabelOutput(ids=ids, raw=str(ids))


class MajorityLabeller(_Fitted):
    """Always the most frequent gold label set of the training turns."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        ids = list(self.context.fitted.majority)
        return LabelOutput(ids=ids, raw=str(ids))


class KeywordLabeller(_Fitted):
    """Naive Bayes over the utterance's words, fitted on the training turns."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        ids = self.context.fitted.keyword.predict(observation.text, observation.candidates)
        return LabelOutput(ids=ids, raw=str(ids))


class ParserLabeller(_Base):
    """The rule-based act parser (craigslist only): see :mod:`.parser`."""

    async def start(self, context: LabellerView) -> None:
        if context.track != "craigslist":
            raise UsageError("the parser labeller labels craigslist acts only (--track craigslist)")
        await super().start(context)
        price = dict(context.context).get("listing price", "").lstrip("$")
        try:
            self.listing: float | None = float(price)
        except ValueError:
            self.listing = None

    async def respond(self, observation: TurnView) -> LabelOutput:
        history = [(u.speaker, u.text) for u in observation.dialogue[:-1]]
        act = classify(history, observation.text, self.listing, buyer=observation.speaker)
        return LabelOutput(ids=[act], raw=str([act]))


def render_turn(context: LabellerView, turn: TurnView) -> dict[str, str]:
    """The placeholders of the track's template."""
    return {
        "context": "\n".join(f"{k}: {v}" for k, v in context.context),
        "dialogue": "\n".join(f"{u.speaker}: {u.text}" for u in turn.dialogue),
        "speaker": turn.speaker,
        "candidates": "\n".join(f"- {c}: {context.labels[c]}" for c in turn.candidates),
    }


class LLMLabeller(_Base):
    """A model answering ``{"labels": [ids]}``; one request per turn from the track's template
    (``prompts/craigslist.txt`` or ``prompts/casino.txt``)."""

    def __init__(self, options: PlayerOptions) -> None:
        self.model = options.require_model("the llm labeller", "--model")
        self.prompts = options.require_prompts()
        self.sampling = Sampling(options.constrained, options.temperature, options.max_tokens)
        self.checker = labels_checker()

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMLabeller:
        return cls(options)

    async def respond(self, observation: TurnView) -> LabelOutput:
        text = self.prompts.render(self.context.track, **render_turn(self.context, observation))
        reply = await json_reply(
            self.model,
            self.sampling,
            [ChatMessage(role="user", content=text)],
            self.checker,
            role="labeller",
            seed=self.context.seed,
            usage=self.context.usage,
        )
        return read_labels(reply.value, reply.raw, reply.format_error)


__all__ = [
    "BASELINES",
    "LABELLER",
    "LABELS_SCHEMA",
    "LabelOutput",
    "Labeller",
    "LabellerContext",
    "TurnView",
]


_EXAMPLE = re.compile(r"\{\s*\"labels\"\s*:\s*\[[^\]]*\]\s*\}")


class CopyExampleLabeller(_Base):
    """A floor control: answers every turn with the example answer of the track's prompt as
    rendered for it (a ``--prompts`` override is copied too). A prompt whose example names
    likely labels would hand this player the label prior."""

    def __init__(self, options: PlayerOptions) -> None:
        self.prompts = options.require_prompts()
        self.checker = labels_checker()

    @classmethod
    def from_options(cls, options: PlayerOptions) -> CopyExampleLabeller:
        return cls(options)

    async def respond(self, observation: TurnView) -> LabelOutput:
        text = self.prompts.render(self.context.track, **render_turn(self.context, observation))
        found = _EXAMPLE.search(text)
        raw = found.group(0) if found else ""
        checked = self.checker.check(raw)
        return read_labels(checked.value, raw, checked.error)
