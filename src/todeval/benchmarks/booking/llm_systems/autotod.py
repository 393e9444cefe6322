"""``autotod``: an AutoTOD-style agent (Xu et al. 2024) with SQL-like query tools.

One LLM holds the dialogue with a query tool per entity (``query_<entity>s``: MultiWOZ's
``query_restaurants``, ``query_hotels`` and ``query_trains``; argument ``sql_where``: the
condition of an SQL ``WHERE`` clause) instead of the structured search tools, plus the booking
tools and ``followup``. As in AutoTOD, a plain-text reply is the agent's message to the user:
it becomes a ``followup`` (an empty reply stays text, a format violation). ``followup`` stays
available so that constrained decoding, which forces a tool call, can still reach the user.

Query calls are translated into the game master's DB tool calls (:mod:`.sql`), so the game
master still runs the DB and the rows come back as the query's tool result. A query that cannot
be translated goes to the game master as the DB tool with the raw text ``WHERE <condition>`` as
arguments: never valid JSON, so it is recorded as a format violation with the query in ``raw``.
"""

from __future__ import annotations

import json
from typing import Any

from todeval.backends.types import ToolCallOut
from todeval.benchmarks.booking.llm_systems.base import ToolCallingSystem, output_for
from todeval.benchmarks.booking.llm_systems.prompts import query_tool_name
from todeval.benchmarks.booking.llm_systems.sql import SqlWhereError, where_to_arguments
from todeval.benchmarks.booking.messages import (
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
)
from todeval.benchmarks.booking.schema import DB_TOOLS, FOLLOWUP
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.core import safejson
from todeval.core.records import CallUsage


def query_tables(db_tools: dict[str, str]) -> dict[str, str]:
    """Query tool -> the search tool it stands for (``db_tools``: search tool -> entity)."""
    return {query_tool_name(entity): tool for tool, entity in db_tools.items()}


QUERY_TABLES = {query_tool_name(d): d for d in DB_TOOLS.values()}
"""MultiWOZ's query tools -> their tables."""


def _columns(parameters: dict[str, Any]) -> str:
    parts = []
    for column, prop in parameters["properties"].items():
        if prop.get("type") == "object":
            value = prop["properties"]["value"]
            kind = "comparable"
            if "enum" in value:
                kind += f", one of {', '.join(value['enum'])}"
            parts.append(f"{column} ({kind})")
        elif "enum" in prop:
            parts.append(f"{column} (one of {', '.join(prop['enum'])})")
        else:
            parts.append(column)
    return "; ".join(parts)


def query_tools(
    tool_definitions: list[dict[str, Any]], db_tools: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The SQL-like query tools, one per search tool of ``db_tools`` (search tool -> entity;
    default MultiWOZ's), describing the columns of the search tools in ``tool_definitions``."""
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tool_definitions}
    tools = []
    for tool, domain in (db_tools if db_tools is not None else DB_TOOLS).items():
        name = query_tool_name(domain)
        columns = _columns(by_name[tool])
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": f"Query the {domain} table with an SQL WHERE condition. "
                    f"Columns: {columns}.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "sql_where": {
                                "type": "string",
                                "description": "e.g. area = 'centre' AND pricerange = 'cheap'",
                            }
                        },
                        "required": ["sql_where"],
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tools


def _sql_where(raw: str) -> str | None:
    """The ``sql_where`` string of a query call's raw arguments, if they are well-formed."""
    try:
        arguments = safejson.loads(raw)
    except json.JSONDecodeError:
        return None
    if isinstance(arguments, dict) and set(arguments) == {"sql_where"}:
        where = arguments["sql_where"]
        return where if isinstance(where, str) else None
    return None


def translate_query(call: ToolCallOut, db_parameters: dict[str, Any], tool: str) -> ToolCall:
    """The game master's call of search tool ``tool`` for a query tool call.

    An untranslatable query becomes the search tool with raw-text arguments
    ``WHERE <condition> /* <why> */``, which is never valid JSON (a format violation).
    """
    where = _sql_where(call.arguments)
    if where is None:
        return ToolCall(name=tool, arguments=f"WHERE {call.arguments} /* malformed arguments */")
    try:
        return ToolCall(name=tool, arguments=where_to_arguments(where, db_parameters))
    except SqlWhereError as exc:
        return ToolCall(name=tool, arguments=f"WHERE {where} /* {exc} */")


class AutoTODSystem(ToolCallingSystem):
    """One LLM with SQL-like query tools, the booking tools and ``followup``."""

    template = "autotod"
    player = "autotod"
    db_parameters: dict[str, dict[str, Any]]

    async def start(self, context: SystemContext) -> None:
        self.restart(context)
        world = world_of(context.task_set)
        kept = [
            t
            for t in context.tools
            if t["function"]["name"] in world.booking_tools or t["function"]["name"] == FOLLOWUP
        ]
        self.tools = [*kept, *query_tools(context.tools, dict(world.db_tools))]
        self.tables = query_tables(dict(world.db_tools))
        self.db_parameters = {
            t["function"]["name"]: t["function"]["parameters"]
            for t in context.tools
            if t["function"]["name"] in world.db_tools
        }

    async def respond(self, observation: Observation) -> SystemOutput:
        self.chat.observe(observation)
        usage: list[CallUsage] = []
        result, call = await self.call(usage)
        if call is None:
            if result.text.strip():
                message = ToolCall(name=FOLLOWUP, arguments={"message": result.text.strip()})
                return SystemOutput(tool_call=message, text=result.text, usage=usage)
            return SystemOutput(text=result.text, usage=usage)
        if call.name in self.tables:
            tool = self.tables[call.name]
            translated = translate_query(call, self.db_parameters[tool], tool)
            return SystemOutput(tool_call=translated, text=result.text or None, usage=usage)
        return output_for(call, result.text, usage)
