"""The text tool protocol, for servers and local models without native tool calling.

The tools are described in the system prompt and the model answers a tool call with one JSON
object ``{"tool": "<name>", "arguments": {...}}`` in its message; :func:`parse_tool_reply`
turns such a reply back into tool calls. Earlier tool calls and tool results in the history are
rewritten as plain assistant and user messages, so any chat template can render them.

With constrained decoding, :func:`tool_call_schema` gives the JSON schema of a valid reply (one
of the tools with its argument schema), which a grammar or a JSON-schema response format can
enforce. :func:`limit_string_lengths` bounds free strings so a constrained small model cannot
run to ``max_tokens`` inside one string.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any

from todeval.backends.types import ChatMessage, ToolCallOut, ToolChoice
from todeval.core import safejson

DEFAULT_MAX_STRING = 200
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def tool_name(tool: dict[str, Any]) -> str:
    """The function name of an OpenAI function tool (``""`` when malformed)."""
    function = tool.get("function", tool)
    name = function.get("name", "") if isinstance(function, dict) else ""
    return str(name)


def forced_tool(tool_choice: ToolChoice | None) -> str | None:
    """The function name a ``tool_choice`` forces, if it forces one."""
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
    return None


def _selected_tools(
    tools: list[dict[str, Any]], tool_choice: ToolChoice | None
) -> list[dict[str, Any]]:
    forced = forced_tool(tool_choice)
    if forced is None:
        return tools
    return [t for t in tools if tool_name(t) == forced]


def tool_instructions(tools: list[dict[str, Any]], tool_choice: ToolChoice | None) -> str:
    """System-prompt text describing the tools and the JSON reply format."""
    selected = _selected_tools(tools, tool_choice)
    lines = ["You can call these tools:"]
    for tool in selected:
        function = tool.get("function", tool)
        params = json.dumps(function.get("parameters", {}), separators=(",", ":"))
        description = function.get("description", "")
        lines.append(f"- {tool_name(tool)}: {description} Arguments (JSON schema): {params}")
    lines.append(
        'To call a tool, reply with only one JSON object: {"tool": "<tool name>", '
        '"arguments": {<arguments>}} and nothing else.'
    )
    if tool_choice == "required" or forced_tool(tool_choice) is not None:
        lines.append("You must call a tool in this reply.")
    return "\n".join(lines)


def _call_json(call: ToolCallOut) -> str:
    try:
        arguments: Any = safejson.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        arguments = call.arguments
    return json.dumps({"tool": call.name, "arguments": arguments}, ensure_ascii=False)


def to_text_messages(
    messages: list[ChatMessage],
    tools: list[dict[str, Any]] | None,
    tool_choice: ToolChoice | None,
) -> list[dict[str, str]]:
    """Plain system/user/assistant messages with string content, tools described in text."""
    names: dict[str, str] = {}
    out: list[dict[str, str]] = []
    for message in messages:
        if message.role == "tool":
            name = message.name or names.get(message.tool_call_id or "", "tool")
            out.append({"role": "user", "content": f"Result of {name}: {message.content or ''}"})
            continue
        content = message.content or ""
        if message.tool_calls:
            for call in message.tool_calls:
                names[call.id] = call.name
            calls = "\n".join(_call_json(c) for c in message.tool_calls)
            content = f"{content}\n{calls}".strip()
        out.append({"role": message.role, "content": content})
    if tools and tool_choice != "none":
        instructions = tool_instructions(tools, tool_choice)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{instructions}"}
        else:
            out.insert(0, {"role": "system", "content": instructions})
    return out


def _json_values(text: str) -> list[Any]:
    """JSON values found in ``text``: fenced blocks first, then the first value in the text."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start, char in enumerate(candidate):
            if char not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(candidate, start)
                safejson.check_depth(value)
            except safejson.JsonDepthError:
                break  # too deep to be a tool call: no call in this candidate
            except RecursionError:
                break
            except json.JSONDecodeError:
                continue
            value = safejson.repair_surrogates(value)
            return value if isinstance(value, list) else [value]
    return []


def _call_id(text: str, index: int) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"call_{digest}_{index}"


def parse_tool_reply(text: str) -> list[ToolCallOut]:
    """Tool calls written as ``{"tool": name, "arguments": {...}}`` in a reply (may be none).

    Also accepts ``name`` for ``tool`` and ``parameters`` for ``arguments``. A tool name that is
    not offered is still returned: judging the call is the caller's job.
    """
    calls: list[ToolCallOut] = []
    for value in _json_values(text):
        if not isinstance(value, dict):
            continue
        name = value.get("tool", value.get("name"))
        if not isinstance(name, str):
            continue
        arguments = value.get("arguments", value.get("parameters", {}))
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCallOut(id=_call_id(text, len(calls)), name=name, arguments=raw))
    return calls


def tool_call_schema(
    tools: list[dict[str, Any]], tool_choice: ToolChoice | None = None
) -> dict[str, Any]:
    """JSON schema of one text-protocol tool call (restricted to a forced tool, if any)."""
    options: list[dict[str, Any]] = []
    for tool in _selected_tools(tools, tool_choice):
        function = tool.get("function", tool)
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        options.append(
            {
                "type": "object",
                "properties": {"tool": {"const": tool_name(tool)}, "arguments": parameters},
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            }
        )
    if len(options) == 1:
        return options[0]
    return {"anyOf": options}


def limit_string_lengths(
    schema: dict[str, Any], max_length: int = DEFAULT_MAX_STRING
) -> dict[str, Any]:
    """A copy of ``schema`` whose free strings (no enum/const/pattern/maxLength) get a maxLength."""
    result = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            free = not any(k in node for k in ("enum", "const", "pattern", "maxLength", "format"))
            if node.get("type") == "string" and free:
                node["maxLength"] = max_length
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(result)
    return result
