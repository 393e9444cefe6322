"""A booking run of an LLM system (through a models file, against the test model server):
verified after the models file and the server are gone -- verify contacts no model -- with the
model calls left out of the replay and the trust line naming the model (issue 45.3)."""

from __future__ import annotations

from pathlib import Path

from tests.submission.helpers import archive, run, verdict_of
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess


def test_an_llm_system_run_is_verified_offline(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    with ServerProcess(ServerConfig(script=booking_script())) as server:
        models.write_text(f"models:\n  m:\n    spec: openai:scripted@{server.base_url}\n")
        config = {"system": "monolithic", "system_model": "m", "models_file": str(models),
                  "limit": 2}  # fmt: skip
        out = run("booking", config, tmp_path / "run")
    models.unlink()
    assert "model_call" in (out / "episodes.jsonl").read_text("utf-8")
    verdict = verdict_of(archive(out, tmp_path / "llm.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert verdict.model == "m"
    assert any(line.startswith("trust: built-in player on the model m") for line in verdict.lines())
