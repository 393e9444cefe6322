"""Prompt and reply schema of ``incar-turns``.

One system message per dialogue (the assistant's task, the dialogue's intent and knowledge base,
the placeholders and state slots of that intent, the reply format) and one user message (the
conversation so far, ending with the driver's latest utterance). The reply is one JSON object:
the delexicalized ``response`` and the ``state`` (informable slot -> value).
"""

from __future__ import annotations

import json
from typing import Any

from todeval.backends.types import ChatMessage
from todeval.benchmarks.incar_turns.corpus import IncarDialogue
from todeval.dialogue.prompts import PromptSet, package_prompts
from todeval.scoring.incar import INFORMABLE, REQUESTABLE

PROMPT_VERSION = "incar-turns/1"

_TASKS = {
    "schedule": "the driver's calendar (events, their dates, times, parties, agendas, rooms)",
    "navigate": "navigation to points of interest (places, addresses, distances, traffic)",
    "weather": "the weather forecast (conditions and temperatures by city and day)",
}
_STATE_HELP = {
    "schedule": "event, date, time, party, agenda and room the driver asked about or set",
    "navigate": "the kind of place (poi_type) and the distance the driver asked for",
    "weather": "the date, the location and the weather attribute the driver asked about",
}

PACKAGE = "todeval.benchmarks.incar_turns"
"""Its ``prompts/`` folder holds the templates: ``system`` (``${task}``, ``${title}``, ``${kb}``,
``${placeholders}``, ``${state_help}``, ``${slots}``, ``${example}``) and ``user``
(``${transcript}``: the conversation so far)."""

_EXAMPLES = {
    "schedule": {
        "response": "your [value_event] is on [value_date] at [value_time] .",
        "state": {"event": "dentist appointment"},
    },
    "navigate": {
        "response": "[value_poi] is [value_distance] away at [value_address] .",
        "state": {"poi_type": "gas station"},
    },
    "weather": {
        "response": "it will be [value_weather_attribute] in boston on monday .",
        "state": {"location": "boston", "date": "monday"},
    },
}


def _kb_text(dialogue: IncarDialogue) -> str:
    if not dialogue.rows:
        return "(empty)"
    return "\n".join(json.dumps(row, ensure_ascii=False) for row in dialogue.rows)


def system_prompt(dialogue: IncarDialogue, prompts: PromptSet | None = None) -> str:
    intent = dialogue.intent
    return (prompts or package_prompts(PACKAGE)).render(
        "system",
        task=_TASKS[intent],
        title=dialogue.kb_title or intent,
        kb=_kb_text(dialogue),
        placeholders=", ".join(f"[value_{s}]" for s in REQUESTABLE[intent]),
        state_help=_STATE_HELP[intent],
        slots=", ".join(INFORMABLE[intent]),
        example=json.dumps(_EXAMPLES[intent]),
    )


def reply_schema(intent: str) -> dict[str, Any]:
    """The JSON schema of a reply for a dialogue of ``intent``."""
    return {
        "type": "object",
        "properties": {
            "response": {"type": "string"},
            "state": {
                "type": "object",
                "properties": {slot: {"type": "string"} for slot in INFORMABLE[intent]},
                "additionalProperties": False,
            },
        },
        "required": ["response", "state"],
        "additionalProperties": False,
    }


def transcript(dialogue: IncarDialogue, turn: int) -> str:
    """The conversation up to and including the driver's utterance(s) of turn ``turn``."""
    lines: list[str] = []
    for i in range(turn + 1):
        lines.extend(f"Driver: {u}" for u in dialogue.turns[i].users)
        if i < turn:
            lines.append(f"Assistant: {dialogue.turns[i].response}")
    return "\n".join(lines)


def messages(
    dialogue: IncarDialogue, turn: int, prompts: PromptSet | None = None
) -> list[ChatMessage]:
    """The chat messages of the call for turn ``turn`` (0-based)."""
    prompts = prompts or package_prompts(PACKAGE)
    return [
        ChatMessage(role="system", content=system_prompt(dialogue, prompts)),
        ChatMessage(
            role="user", content=prompts.render("user", transcript=transcript(dialogue, turn))
        ),
    ]
