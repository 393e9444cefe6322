"""An end-to-end episode with a real local model: monolithic system on SmolLM2-135M (llama.cpp,
in process) against the agenda user, capped (one task, few turns, small max_tokens).

SmolLM2 is far too small to book anything; the test checks that the plumbing is real: the model
is called, its output is judged by the game master (valid actions or recorded violations), and
tokens, latency and FLOPs land in the record and the summary.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.backends.backend_helpers import require_local_model
from todeval.cli import main


def test_monolithic_smollm2_episode(tmp_path: Path) -> None:
    require_local_model()
    out = tmp_path / "run"
    args = [
        "run",
        "booking",
        "--system",
        "monolithic",
        "--system-model",
        "llamacpp:smollm2",
        "--limit",
        "1",
        "--max-tokens",
        "48",
        "--constrained",
        "--no-cache",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(args) == 0
    record = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert record["outcome"] in {"success", "failure", "aborted"}
    usage = record["usage"]["system"]
    assert usage["calls"] >= 1 and usage["completion_tokens"] > 0 and usage["flops"] > 0
    assert not usage["estimated"]
    kinds = {e["kind"] for e in record["events"]}
    assert kinds & {"system_message", "db_query", "booking_request", "violation"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["latency"]["system"]["p50"] > 0
    assert summary["cost"]["flops_total"] == usage["flops"]


def test_hd_pipeline_smollm2_episode(tmp_path: Path) -> None:
    """The H&D pipeline on SmolLM2, capped: every role is a real model call, accounted apart."""
    require_local_model()
    out = tmp_path / "hd"
    args = ["run", "booking", "--system", "hd-pipeline", "--system-model", "llamacpp:smollm2",
            "--task-ids", "test/000-sng01936", "--max-tokens", "40", "--constrained",
            "--max-turns", "2", "--no-cache", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(args) == 0
    record = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert record["outcome"] in {"success", "failure", "aborted"}
    roles = {r for r, u in record["usage"].items() if r.startswith("system") and u["calls"]}
    assert "system.domain" in roles, record["usage"].keys()
    assert all(record["usage"][r]["completion_tokens"] > 0 for r in roles)
