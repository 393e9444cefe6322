"""Tool calls the pipeline systems (``modular-prog``, ``hd-pipeline``) build in Python from
their state, for any world: search arguments, booking arguments, whether a chosen row still fits.
"""

from __future__ import annotations

from typing import Any

from todeval.benchmarks.booking.world.model import World


def _compared(operator: str, have: str, want: str) -> bool:
    """``have <operator> want``; ordered whole numbers as numbers, other values as text."""
    if operator == "=":
        return have == want
    if have.isdigit() and want.isdigit():
        numbers = int(have), int(want)
        return numbers[0] >= numbers[1] if operator == ">=" else numbers[0] <= numbers[1]
    return have >= want if operator == ">=" else have <= want


def row_fits(world: World, domain: str, row: dict[str, str], slots: dict[str, str]) -> bool:
    """Whether a chosen row still satisfies the user's informable slots (a slot the world
    compares -- MultiWOZ's departure and arrival times -- as it compares it)."""
    compare = world.compare.get(domain, {})
    for key, value in slots.items():
        if key not in world.informable[domain] or key not in row:
            continue
        if not _compared(compare.get(key, "="), row[key].lower(), value.lower()):
            return False
    return True


def search_arguments(world: World, domain: str, slots: dict[str, str]) -> dict[str, Any]:
    """The search tool's arguments for ``slots`` (the ones it takes; a comparable slot with the
    operator the world says a user's value means)."""
    properties = world.tool_parameters()[world.search_tool(domain)]["properties"]
    arguments: dict[str, Any] = {}
    for key, value in slots.items():
        if key not in properties:
            continue
        if properties[key].get("type") == "object":
            arguments[key] = {"operator": world.user_operator(domain, key), "value": value}
        else:
            arguments[key] = value
    return arguments


def booking_arguments(
    world: World, domain: str, row: dict[str, str], slots: dict[str, str]
) -> dict[str, str]:
    """The booking tool's arguments: the row's columns and attributes, the user's details."""
    tool = world.booking_tool(domain)
    from_row = set(world.informable[domain]) | set(world.optional_attributes[domain])
    arguments: dict[str, str] = {}
    for key in world.tool_parameters()[tool]["properties"]:
        if key in from_row and key in row:
            arguments[key] = row[key]
        elif key in slots:
            arguments[key] = slots[key]
    return arguments
