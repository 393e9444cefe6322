"""The ``llm`` and ``llm-multi`` providers: the original Jax's flow, with our own prompts.

Every step is one model call answered with a JSON object under a schema
(:func:`todeval.dialogue.chat.json_reply`, accounted to the role ``provider`` in the view's
usage list); the templates are ``prompts/provider_<step>_<lang>.txt``:

1. **Gate** (``gate``; while response 0 has not been given): ``related`` -> response 0
   verbatim, else the fixed apology.
2. **Classify** (``classify``) the seeker's last message into the six types, shown the
   dialogue and the available nodes with their purposes.
3. Types 2 and 3 with no node left -> "enough information".
4. Type 4 is double-checked (``repeat``); not really a repeat -> handled as type 2.
5. Types 2 and 3 get up to three passes over the available nodes in label order, one call per
   node per pass, and the first node that passes is released verbatim (the game master
   unlocks its children):

   * A (``pass_a``): does the node answer part of the question? For an English purpose naming
     "that there are multiple X" (once, X of one to three words) the check is instead
     ``pass_a_multiple``: did the seeker notice the several X and ask which?
   * B (``pass_b``): given the node's pass-A analysis, does it clear up *some* of the question?
   * C: ``pass_c_multiple`` (noticed several options) for purposes saying so ("that there are
     multiple", "存在多个"), else ``pass_c`` (does it correct a wrong assumption?).

   No pass -> answered as type 3 (a reassuring reply).
6. Types 1, 4, 5 and 6 get their canned replies (:mod:`._replies`).

``llm-multi`` differs in pass A only: every node that passes is released in the same turn,
joined deterministically (:func:`._replies.join_released`), as the original's fallback does;
passes B and C still release one node.

A reply that is not valid JSON under the step's schema is asked for once more (the bad reply
and a ``retry`` message appended, so a response cache does not return it again); a second bad
reply raises :class:`ProviderReplyError`, which the game master records as a simulator error.
Cost: at most 2 + 3 x (available nodes) calls per seeker turn (3 with the type-4 check).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from todeval.backends.sampling import Sampling
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks.clarq._tasks import ResponseNode
from todeval.benchmarks.clarq._text import Language
from todeval.benchmarks.clarq.protocol import (
    Decision,
    ProviderTurn,
    ProviderView,
    SeekerKind,
)
from todeval.benchmarks.clarq.providers._replies import (
    canned,
    release_message,
    released_message,
)
from todeval.dialogue.chat import json_reply
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet, package_prompts
from todeval.dialogue.replies import ReplyChecker

PACKAGE = "todeval.benchmarks.clarq"
"""The package whose ``prompts/`` folder holds the provider templates."""

ROLE = "provider"
SEED = 8848
"""The original provider's seed (temperature 0, JSON mode)."""
DEFAULT_MAX_TOKENS = 400
"""Reply cap of one provider call when the run sets none (an analysis and one field)."""

PROVIDER_STEPS = (
    "gate",
    "classify",
    "repeat",
    "pass_a",
    "pass_a_multiple",
    "pass_b",
    "pass_c",
    "pass_c_multiple",
    "retry",
)
"""The provider's templates are ``provider_<step>_<lang>``; ``pass_a_multiple`` is English
only (the original special-cases English purposes only)."""


def provider_templates() -> list[str]:
    """The names of every provider template (what ``--prompts`` may override for it)."""
    return [
        f"provider_{step}_{lang}"
        for step in PROVIDER_STEPS
        for lang in ("en", "zh")
        if not (step == "pass_a_multiple" and lang == "zh")
    ]


def _schema(flag: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    value: dict[str, Any] = extra if extra is not None else {"type": "boolean"}
    return {
        "type": "object",
        "properties": {"analysis": {"type": "string"}, flag: value},
        "required": ["analysis", flag],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Step:
    """One kind of call: its template stem, the field that carries the answer, its schema."""

    name: str
    field: str
    checker: ReplyChecker


def _step(name: str, flag: str, extra: dict[str, Any] | None = None) -> Step:
    return Step(name, flag, ReplyChecker(_schema(flag, extra)))


GATE = _step("gate", "related")
CLASSIFY = _step("classify", "type", {"type": "integer", "minimum": 1, "maximum": 6})
REPEAT = _step("repeat", "repeat")
PASS_A = _step("pass_a", "answerable")
PASS_A_MULTIPLE = _step("pass_a_multiple", "answerable")
PASS_B = _step("pass_b", "answerable")
PASS_C = _step("pass_c", "corrects")
PASS_C_MULTIPLE = _step("pass_c_multiple", "answerable")

KINDS: dict[int, SeekerKind] = {
    1: SeekerKind.WHOLE_TASK,
    2: SeekerKind.ANSWERABLE,
    3: SeekerKind.UNANSWERABLE,
    4: SeekerKind.REPEAT,
    5: SeekerKind.UNRELATED,
    6: SeekerKind.VAGUE,
}

_MULTIPLE_EN = " that there are multiple "
_MULTIPLE_ZH = "存在多个"
_NONE: dict[Language, str] = {"en": "(none)", "zh": "（无）"}


def multiple_options(purpose: str, lang: Language) -> str | None:
    """The X of an English purpose saying "that there are multiple X and ..." (the phrase
    once, X one to three words), else ``None`` (always for Chinese, as in the original)."""
    if lang != "en" or purpose.count(_MULTIPLE_EN) != 1:
        return None
    start = purpose.index(_MULTIPLE_EN) + len(_MULTIPLE_EN)
    end = purpose.find(" and", start)
    if end < 0:
        return None
    words = purpose[start:end].split()
    return " ".join(words) if 1 <= len(words) <= 3 else None


def mentions_multiple(purpose: str) -> bool:
    """A purpose about several options (pass C then asks whether the seeker noticed them)."""
    return _MULTIPLE_EN in purpose or _MULTIPLE_ZH in purpose


class ProviderReplyError(RuntimeError):
    """The provider model's reply could not be read, twice: the turn cannot be decided."""


_SPEAKER = re.compile(r"^\s*jax\s*:", re.IGNORECASE)


def render_dialogue(history: Sequence[str], seeker: str) -> str:
    """The transcript as the prompts show it: the provider's messages as sent (``Jax: ...``),
    the seeker's prefixed with its role (greeting first, one line per message)."""
    lines = []
    for i, message in enumerate(history):
        text = " ".join(message.split())
        if i % 2 == 0:
            lines.append(text if _SPEAKER.match(text) else f"Jax: {text}")
        else:
            lines.append(f"{seeker}: {text}")
    return "\n".join(lines)


_RESOLVES: dict[Language, str] = {"en": "resolves", "zh": "用途"}


def render_nodes(nodes: Sequence[ResponseNode], lang: Language) -> str:
    """The available nodes as the classifier sees them: numbered, each with its purpose (the
    node's text stands in for a missing purpose, on dev)."""
    if not nodes:
        return _NONE[lang]
    return "\n".join(
        f"({i}) {node.text}\n    ({_RESOLVES[lang]}: {node.purpose or node.text})"
        for i, node in enumerate(nodes, start=1)
    )


class LLMProvider:
    """The original flow over a model (``--provider-model``); one node per turn."""

    multi: ClassVar[bool] = False
    player: ClassVar[str] = "the llm provider"

    def __init__(
        self,
        model: Backend,
        *,
        prompts: PromptSet | None = None,
        sampling: Sampling | None = None,
        seed: int = SEED,
    ) -> None:
        self.model = model
        self.prompts = prompts or package_prompts(PACKAGE)
        self.sampling = sampling or Sampling()
        self.seed = seed

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMProvider:
        return cls(
            options.require_model(cls.player, "--provider-model"),
            prompts=options.prompts,
            sampling=Sampling(options.constrained, options.temperature, options.max_tokens),
        )

    # -- one call -----------------------------------------------------------------------

    async def ask(self, view: ProviderView, step: Step, **values: str) -> dict[str, Any]:
        """One JSON reply for ``step`` (retried once when unreadable)."""
        lang = view.lang
        prompt = self.prompts.render(f"provider_{step.name}_{lang}", **values)
        messages = [ChatMessage(role="user", content=prompt)]
        error = ""
        raw = ""
        for attempt in range(2):
            reply = await json_reply(
                self.model,
                self._sampling(),
                messages,
                step.checker,
                role=ROLE,
                seed=self.seed,
                usage=view.usage,
            )
            if reply.value is not None:
                return reply.value
            error, raw = reply.format_error or "unreadable", reply.raw
            if attempt == 0:
                retry = self.prompts.render(f"provider_retry_{lang}", error=error)
                messages = [
                    *messages,
                    ChatMessage(role="assistant", content=raw),
                    ChatMessage(role="user", content=retry),
                ]
        raise ProviderReplyError(
            f"the provider model's {step.name} reply was unreadable twice ({error}); "
            f"last reply: {raw[:120]!r}"
        )

    def _sampling(self) -> Sampling:
        if self.sampling.max_tokens is not None:
            return self.sampling
        return Sampling(self.sampling.constrained, self.sampling.temperature, DEFAULT_MAX_TOKENS)

    # -- the flow -----------------------------------------------------------------------

    async def respond(self, view: ProviderView) -> ProviderTurn:
        task = view.task
        lang = view.lang
        replies = canned(lang)
        common = {"role": task.background.role, "task": task.background.task}
        dialogue = render_dialogue(view.history, task.background.role)
        if not view.gate_open:
            gate = await self.ask(view, GATE, **common, opening=task.opening, dialogue=dialogue)
            if gate["related"]:
                return ProviderTurn(
                    decision=Decision.GATE_PASS,
                    message=release_message(task.opening),
                    kind=SeekerKind.WHOLE_TASK,
                    note="gate: about the task",
                )
            return ProviderTurn(
                decision=Decision.APOLOGY,
                message=release_message(replies.apology),
                kind=SeekerKind.UNRELATED,
                note="gate: not about the task",
            )
        nodes = render_nodes(view.available, lang)
        classified = await self.ask(view, CLASSIFY, **common, dialogue=dialogue, nodes=nodes)
        number = int(classified["type"])
        note = f"type {number}"
        if number in (2, 3) and not view.available:
            return ProviderTurn(
                decision=Decision.ENOUGH,
                message=release_message(replies.enough),
                kind=KINDS[number],
                note=f"{note}; nothing left to release",
            )
        if number == 4:
            check = await self.ask(view, REPEAT, **common, dialogue=dialogue)
            if not check["repeat"]:
                number = 2
                note += " -> 2 (not a repeat)"
        if number in (2, 3):
            released, passed = await self._passes(view, common)
            if released:
                return ProviderTurn(
                    decision=Decision.RELEASE,
                    message=released_message([n for _, n in released], lang),
                    released=[label for label, _ in released],
                    kind=KINDS[number],
                    note=f"{note}; pass {passed} released "
                    + ", ".join(label for label, _ in released),
                )
            note += "; no pass"
            number = 3
        kind = KINDS[number]
        return ProviderTurn(
            decision=Decision.NO_RELEASE,
            message=release_message(replies.for_kind(kind)),
            kind=kind,
            note=note,
        )

    async def _passes(
        self, view: ProviderView, common: dict[str, str]
    ) -> tuple[list[tuple[str, str]], str]:
        """The released (label, text) pairs and the pass that released them (A, B, C)."""
        lang = view.lang
        question = view.question
        analyses: list[str] = []
        found: list[tuple[str, str]] = []
        for node in view.available:
            purpose = node.purpose or node.text
            values = {**common, "question": question, "response": node.text, "purpose": purpose}
            options = multiple_options(purpose, lang)
            if options is not None:
                answer = await self.ask(view, PASS_A_MULTIPLE, **values, options=options)
            else:
                answer = await self.ask(view, PASS_A, **values)
            analyses.append(str(answer["analysis"]))
            if answer["answerable"]:
                found.append((node.label, node.text))
                if not self.multi:
                    break
        if found:
            return found, "A"
        for node, analysis in zip(view.available, analyses, strict=True):
            purpose = node.purpose or node.text
            answer = await self.ask(
                view,
                PASS_B,
                **common,
                question=question,
                response=node.text,
                purpose=purpose,
                analysis=analysis,
            )
            if answer["answerable"]:
                return [(node.label, node.text)], "B"
        for node in view.available:
            purpose = node.purpose or node.text
            values = {**common, "question": question, "response": node.text, "purpose": purpose}
            if mentions_multiple(purpose):
                answer = await self.ask(view, PASS_C_MULTIPLE, **values)
                passed = bool(answer["answerable"])
            else:
                answer = await self.ask(view, PASS_C, **values)
                passed = bool(answer["corrects"])
            if passed:
                return [(node.label, node.text)], "C"
        return [], ""


class LLMMultiProvider(LLMProvider):
    """``llm-multi``: pass A releases every answerable node in one turn (joined)."""

    multi: ClassVar[bool] = True
    player: ClassVar[str] = "the llm-multi provider"

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMMultiProvider:
        return cls(
            options.require_model(cls.player, "--provider-model"),
            prompts=options.prompts,
            sampling=Sampling(options.constrained, options.temperature, options.max_tokens),
        )


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "PACKAGE",
    "PROVIDER_STEPS",
    "SEED",
    "LLMMultiProvider",
    "LLMProvider",
    "ProviderReplyError",
    "mentions_multiple",
    "multiple_options",
    "provider_templates",
    "render_dialogue",
    "render_nodes",
]
