"""API keys never appear in anything the model layer logs, returns or stores."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.backends.backend_helpers import FOLLOWUP_TOOL, FakeClock, user_request
from todeval.backends import InfrastructureError, ResponseCache, RetryPolicy, make_backend
from todeval.errors import UsageError
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess, unused_port


def test_api_key_is_in_no_serialised_object(tmp_path: Path) -> None:
    key = "sk-todeval-" + secrets.token_hex(16)
    environ = {"TODEVAL_SECRET_KEY": key}
    cache_path = tmp_path / "cache.sqlite"
    dumps: list[str] = []
    config = ServerConfig(
        api_key=key,
        script=_script(),
        faults=FaultConfig(sequence=["500"]),
    )
    with ServerProcess(config) as server:
        url = server.base_url
        models_file = tmp_path / "models.toml"
        models_file.write_text(
            f'[models.m]\nspec = "openai:m@{url}"\napi_key_env = "TODEVAL_SECRET_KEY"\n'
        )
        cache = ResponseCache(cache_path)

        async def run() -> None:
            backend = make_backend("m", models_file, cache=cache, environ=environ)
            dumps.extend([repr(backend), backend.info.model_dump_json(), repr(backend.info)])
            for request in (user_request(), user_request(), user_request(tools=[FOLLOWUP_TOOL])):
                result = await backend.generate(request, role="system")
                dumps.extend([result.model_dump_json(), repr(result), str(result.usage)])
            await backend.aclose()
            failing = make_backend(
                f"openai:m@http://127.0.0.1:{unused_port()}/v1",
                api_key_env="TODEVAL_SECRET_KEY",
                environ=environ,
                retry=RetryPolicy(max_attempts=1),
                clock=FakeClock(),
            )
            with pytest.raises(InfrastructureError) as info:
                await failing.generate(user_request(), role="system")
            dumps.extend([str(info.value), repr(info.value), repr(info.value.__cause__)])
            wrong = make_backend(
                f"openai:m@{url}", api_key_env="OTHER", environ={"OTHER": key + "x"}
            )
            with pytest.raises(UsageError) as refused:
                await wrong.generate(user_request(), role="system")
            dumps.append(refused.value.message)

        asyncio.run(run())
        recorded = server.requests()
        cache.close()
    assert all(r["authorization_sent"] for r in recorded)  # the key was really used
    dumps.append(str(recorded))
    blob = "\n".join(dumps)
    assert "TODEVAL_SECRET_KEY" in blob  # the variable's name may appear
    assert key not in blob
    for path in tmp_path.iterdir():
        assert key.encode() not in path.read_bytes(), path


def _script() -> Any:
    from todeval.backends import Script

    return Script.model_validate({"replies": ["hello"]})
