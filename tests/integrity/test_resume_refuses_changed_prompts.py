"""Every benchmark's run, continued through ``todeval.api.resume`` (the path Ray workers and
the Python API take) after its prompt templates changed, is refused -- the framework's plan
builder pins the templates' digest for all of them alike (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import todeval.api as td
from todeval.backends.types import GenerationRequest
from todeval.errors import RefusedError
from todeval.runner.options import RuntimeOptions

RUNS: dict[str, dict[str, Any]] = {
    "toy": {"limit": 1},
    "booking": {"limit": 1},
    "clarq": {"limit": 1},
    "bargain": {"labeller": "parser", "limit": 1},
    "multiwoz-turns": {"model": "scripted:test", "limit": 1},
    "incar-turns": {"model": "scripted:test", "limit": 1},
}


def _reply(request: GenerationRequest) -> str:
    return "{}"  # a format failure: enough to finish a run


@pytest.mark.parametrize("name", sorted(RUNS))
def test_resume_refuses_changed_prompts(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    runtime = RuntimeOptions(out=out, cache=False, script=_reply)
    td.run(name, RUNS[name], out=out, runtime=runtime)
    td.resume(out, runtime=runtime)  # unchanged: continues (nothing left to play)
    manifest_file = out / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["config"]["prompts_sha256"]  # every benchmark pins its templates
    manifest["config"]["prompts_sha256"] = "0" * 16  # as if the templates changed since
    manifest_file.write_text(json.dumps(manifest))
    with pytest.raises(RefusedError, match="prompt templates differ"):
        td.resume(out, runtime=runtime)
