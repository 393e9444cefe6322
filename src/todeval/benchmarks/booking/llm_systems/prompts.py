"""Prompts of the LLM players: the templates in ``benchmarks/booking/prompts/*.txt`` (written
for todeval; short on purpose), overridable with ``--prompts DIR``.

The systems never see the user's goal: their prompts describe the service, the tools and the
reply format only. Placeholders: ``slots`` -- ``${domain}``, ``${keys}``; ``user`` --
``${goal}``; the others have none.

The templates are written for MultiWOZ's Cambridge service. A run that plays a domain pack reads
the same templates in a world's wording instead (:func:`world_prompts`: ``prompts/world/``, whose
``@name`` marks are filled from the world -- its service, its entities, their booking details;
the placeholders are the same, so ``--prompts DIR`` overrides them as usual).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from todeval.dialogue.prompts import PromptSet, package_prompts

if TYPE_CHECKING:
    from todeval.benchmarks.booking.world.model import World

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


_MARK = re.compile(r"@([a-z_]+)")


def join_or(items: Iterable[str], last: str = "or") -> str:
    """``a, b or c``."""
    parts = list(items)
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} {last} {parts[-1]}"


@cache
def _world_templates() -> dict[str, str]:
    root = resources.files(PACKAGE).joinpath("prompts", "world")
    return {
        item.name.removesuffix(".txt"): item.read_text(encoding="utf-8").removesuffix("\n")
        for item in root.iterdir()
        if item.name.endswith(".txt")
    }


def query_tool_name(entity: str) -> str:
    """``autotod``'s query tool of an entity (``query_restaurants``)."""
    return f"query_{entity}s"


def _example_where(world: World) -> str:
    entity = world.entities[0]
    props = world.tool_parameters()[world.search_tool(entity)]["properties"]
    parts: list[str] = []
    for key, prop in props.items():
        if "enum" in prop and not parts:
            parts.append(f"{key} = '{prop['enum'][0]}'")
    for key, prop in props.items():
        value = prop.get("properties", {}).get("value", {}) if prop.get("type") == "object" else {}
        if value and len(parts) < 2:
            example = value["enum"][-1] if "enum" in value else "2"
            example = "10:00" if "pattern" in value else example
            parts.append(f"{key} >= '{example}'")
    return " AND ".join(parts) or "name = '...'"


def world_values(world: World) -> dict[str, str]:
    """The facts a world's templates are written with (``@service``, ``@things``, ...)."""
    params = world.tool_parameters()

    def described(entity: str, names: Iterable[str]) -> list[str]:
        props = params[world.booking_tool(entity)]["properties"]
        return [str(props.get(n, {}).get("description") or n) for n in names]

    details = [
        f"{e}: {join_or(described(e, world.booking_details(e)), 'and')}"
        for e in world.entities
        if world.booking_details(e)
    ]
    extras = [
        f"{e}: {join_or(world.optional_attributes[e], 'and')}"
        for e in world.entities
        if world.optional_attributes[e]
    ]
    return {
        "service": world.service or world.name,
        "things": join_or(world.descriptions[e] for e in world.entities),
        "domains": join_or(world.entities),
        "booking_details": "; ".join(details) or "none",
        "row_extras": "; ".join(extras) or "none",
        "query_tools": ", ".join(query_tool_name(e) for e in world.entities),
        "example_where": _example_where(world),
    }


def world_prompts(world: World) -> dict[str, str] | None:
    """The templates in ``world``'s wording (None for MultiWOZ's worlds: the package's as
    written). A ``$`` in a fact is kept literal."""
    if world.service is None:
        return None
    values = {k: v.replace("$", "$$") for k, v in world_values(world).items()}
    return {
        name: _MARK.sub(lambda m: values[m.group(1)], text)
        for name, text in _world_templates().items()
    }


def transcript_text(lines: list[str], limit: int = 10) -> str:
    """The last ``limit`` lines of a dialogue, for single-turn modules."""
    return "Dialogue so far:\n" + "\n".join(lines[-limit:])
