"""Prompts of the LLM players: the templates in ``benchmarks/booking/prompts/*.txt`` (written
for todeval; short on purpose), overridable with ``--prompts DIR``.

The systems never see the user's goal: their prompts describe the service, the tools and the
reply format only. Placeholders: ``slots`` -- ``${domain}``, ``${keys}``; ``user`` --
``${goal}``; the others have none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.dialogue.prompts import PromptSet, package_prompts

PACKAGE = "todeval.benchmarks.booking"
"""The package whose ``prompts/`` folder holds the booking templates."""


def load_prompts(overrides: Mapping[str, str] | None = None) -> PromptSet:
    """The booking templates (``monolithic``, ``modular_llm``, ``autotod``, ``intent``,
    ``slots``, ``followup``, ``user``, ``user_opening``) with ``overrides`` applied."""
    return PromptSet.load(PACKAGE, overrides)


def default_prompts() -> PromptSet:
    """The package's templates (for players built without a run's options)."""
    return package_prompts(PACKAGE)


def _describe(prop: dict[str, Any]) -> str:
    text = str(prop.get("description", ""))
    if "enum" in prop:
        text += f" (one of: {', '.join(str(v) for v in prop['enum'])})"
    if "pattern" in prop:
        text += " (HH:MM)"
    return text


def slots_prompt(prompts: PromptSet, domain: str, schema: dict[str, Any]) -> str:
    """The slot-extraction instructions for one domain, listing its keys."""
    keys = "\n".join(f"- {k}: {_describe(p)}" for k, p in schema["properties"].items())
    return prompts.render("slots", domain=domain, keys=keys)


def transcript_text(lines: list[str], limit: int = 10) -> str:
    """The last ``limit`` lines of a dialogue, for single-turn modules."""
    return "Dialogue so far:\n" + "\n".join(lines[-limit:])
