"""The ``llm`` user simulator: a language model role-plays the customer of a booking goal.

It gets the goal text (``task.message``) in its brief (the ``user`` prompt template), sees the
system's follow-up messages as the other side of the conversation, and answers one turn at a
time. It must end with exactly ``done`` once it has its booking reference(s); a reply whose last
line is a bare ``done`` is reduced to ``done`` (the simulator's own wording around it is not the
system's fault), anything else is passed to the game master as it is.
"""

from __future__ import annotations

import re

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks.booking.llm_systems.prompts import default_prompts
from todeval.benchmarks.booking.messages import UserContext, UserReply
from todeval.core.records import CallUsage
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

DEFAULT_MAX_TOKENS = 150
_DONE_LINE = re.compile(r"^\W*done\W*$", re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(customer|user|me)\s*:\s*", re.IGNORECASE)


def clean_reply(text: str) -> str:
    """Strip speaker prefixes and reduce a reply ending in a bare ``done`` line to ``done``."""
    text = _PREFIX.sub("", text.strip())
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and _DONE_LINE.match(lines[-1]):
        return "done"
    return text.strip()


class LLMUser:
    """A model-backed user simulator (one instance per episode)."""

    def __init__(
        self,
        model: Backend,
        *,
        sampling: Sampling | None = None,
        prompts: PromptSet | None = None,
    ) -> None:
        self.model = model
        self.sampling = sampling or Sampling()
        self.prompts = prompts or default_prompts()
        self.history: list[ChatMessage] = []
        self.seed: int | None = None

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMUser:
        return cls(
            options.require_model("--user llm", "--user-model"),
            sampling=Sampling(False, options.temperature, options.max_tokens),
            prompts=options.prompts,
        )

    async def start(self, context: UserContext) -> None:
        self.seed = context.seed % (2**31)
        brief = self.prompts.render("user", goal=context.task.message)
        self.history = [ChatMessage(role="system", content=brief)]

    async def respond(self, system_message: str | None) -> UserReply:
        opening = self.prompts.render("user_opening")
        self.history.append(ChatMessage(role="user", content=system_message or opening))
        request = self.sampling.request(
            list(self.history), seed=self.seed, max_tokens=DEFAULT_MAX_TOKENS
        )
        usage: list[CallUsage] = []
        result = await generate_accounted(self.model, request, role="user", usage=usage)
        text = clean_reply(result.text)
        self.history.append(ChatMessage(role="assistant", content=text))
        return UserReply(text=text, usage=usage)
