"""The ``llm`` user simulator: a language model role-plays the customer of a booking goal.

It gets the goal text (``task.message``) and a short brief, sees the system's follow-up messages
as the other side of the conversation, and answers one turn at a time. It must end with exactly
``done`` once it has its booking reference(s); a reply whose last line is a bare ``done`` is
reduced to ``done`` (the simulator's own wording around it is not the system's fault), anything
else is passed to the game master as it is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from todeval.benchmarks.booking.protocol import PlayerOptions, UserContext, UserReply

if TYPE_CHECKING:
    from todeval.backends.types import Backend, ChatMessage

BRIEF = """\
You are role-playing a customer who contacts a booking assistant for Cambridge (restaurants, \
hotels and trains). Your goal:

{goal}

How to play:
- Write only your own next message, as the customer would: short, natural, one or two sentences.
- Reveal your requirements a few at a time, as the assistant asks or as the conversation needs; \
never invent requirements that are not in the goal.
- If the goal says to try something first and fall back to something else, ask for the first \
option first and switch only when the assistant says it is not possible.
- Answer the assistant's questions from your goal; if the goal does not say, tell it you have no \
preference.
- Ask for any details the goal says you want (phone number, address, postcode, price, ...).
- You need a booking reference number for every booking in the goal.
- When you have all the reference numbers you need, reply with exactly the single word: done
"""

OPENING = "(The booking assistant is ready. Write your first message to it.)"
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

    def __init__(self, model: Backend, *, temperature: float = 0.0, max_tokens: int = 150) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.history: list[ChatMessage] = []
        self.seed: int | None = None

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMUser:
        if options.model is None:
            from todeval.errors import UsageError

            raise UsageError("--user llm needs --user-model SPEC")
        return cls(
            options.model, temperature=options.temperature, max_tokens=options.max_tokens or 150
        )

    async def start(self, context: UserContext) -> None:
        from todeval.backends.types import ChatMessage

        self.seed = context.seed % (2**31)
        self.history = [ChatMessage(role="system", content=BRIEF.format(goal=context.task.message))]

    async def reply(self, system_message: str | None) -> UserReply:
        from todeval.backends.types import ChatMessage, GenerationRequest

        self.history.append(ChatMessage(role="user", content=system_message or OPENING))
        result = await self.model.generate(
            GenerationRequest(
                messages=list(self.history),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=self.seed,
            ),
            role="user",
        )
        text = clean_reply(result.text)
        self.history.append(ChatMessage(role="assistant", content=text))
        return UserReply(text=text, usage=[result.usage])
