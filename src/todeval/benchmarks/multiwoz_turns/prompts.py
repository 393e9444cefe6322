"""Prompt and reply schema of ``multiwoz-turns``.

The model gets one system message (the task, the placeholder vocabulary, the state slots and
the reply format) and one user message (the conversation so far: user turns and the gold
delexicalised system turns, ending with the user's latest turn). It answers with one JSON
object: the delexicalised ``response``, the dialogue ``state`` and its ``active_domains``.
"""

from __future__ import annotations

from typing import Any

from todeval.backends.types import ChatMessage
from todeval.benchmarks.multiwoz_turns.corpus import MultiwozDialogue
from todeval.dialogue.prompts import PromptSet, package_prompts

PROMPT_VERSION = "multiwoz-turns/1"

DOMAINS: tuple[str, ...] = (
    "restaurant", "hotel", "attraction", "train", "taxi", "police", "hospital",
)  # fmt: skip

# The slots of the MultiWOZ 2.2 gold states, as the scorer names them.
STATE_SLOTS: dict[str, tuple[str, ...]] = {
    "restaurant": ("name", "food", "area", "pricerange", "bookday", "booktime", "bookpeople"),
    "hotel": (
        "name", "type", "area", "pricerange", "stars", "internet", "parking",
        "bookday", "bookpeople", "bookstay",
    ),
    "attraction": ("name", "type", "area"),
    "train": ("departure", "destination", "day", "leave", "arrive", "bookpeople"),
    "taxi": ("departure", "destination", "leave", "arrive"),
    "police": (),
    "hospital": (),
}  # fmt: skip

PACKAGE = "todeval.benchmarks.multiwoz_turns"
"""Its ``prompts/`` folder holds the templates: ``system`` (no placeholders) and ``user``
(``${transcript}``: the conversation so far)."""


def reply_schema() -> dict[str, Any]:
    """The JSON schema of a reply (sent to the backend with ``--constrained``)."""
    state = {
        "type": "object",
        "properties": {
            domain: {
                "type": "object",
                "properties": {slot: {"type": "string"} for slot in slots},
                "additionalProperties": False,
            }
            for domain, slots in STATE_SLOTS.items()
        },
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "response": {"type": "string"},
            "state": state,
            "active_domains": {"type": "array", "items": {"type": "string", "enum": list(DOMAINS)}},
        },
        "required": ["response", "state", "active_domains"],
        "additionalProperties": False,
    }


def transcript(dialogue: MultiwozDialogue, turn: int) -> str:
    """The conversation up to and including the user's utterance of system turn ``turn``."""
    lines = []
    for i in range(turn + 1):
        lines.append(f"User: {dialogue.users[i]}")
        if i < turn:
            lines.append(f"System: {dialogue.systems[i]}")
    return "\n".join(lines)


def messages(
    dialogue: MultiwozDialogue, turn: int, prompts: PromptSet | None = None
) -> list[ChatMessage]:
    """The chat messages of the call for system turn ``turn`` (0-based)."""
    prompts = prompts or package_prompts(PACKAGE)
    return [
        ChatMessage(role="system", content=prompts.render("system")),
        ChatMessage(
            role="user", content=prompts.render("user", transcript=transcript(dialogue, turn))
        ),
    ]
