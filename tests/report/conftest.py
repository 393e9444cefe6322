"""Shared run directories for the report tests (made once per session, real runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.helpers import rule_run, run_cli, scripted_llm_run, xss_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """rule vs agenda, rule vs corpus (a detected panel), a priced LLM system, unrealistic."""
    base = tmp_path_factory.mktemp("runs")
    tmp = tmp_path_factory.mktemp("llm")
    return {
        "rule": rule_run(base / "rule-agenda"),
        "corpus": rule_run(base / "rule-corpus", "--user", "corpus"),
        "llm": scripted_llm_run(base / "mono-toy", tmp),
        "unrealistic": rule_run(
            base / "rule-unreal", "--tasks", "unrealistic", "--limit", "30", "--limit-mode", "first"
        ),
    }


@pytest.fixture(scope="session")
def xss(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("xss")
    return xss_run(base / "xss<img src=x onerror=window.__pwned=1>")


@pytest.fixture(scope="session")
def mwz_summary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("score") / "hdsa.json"
    pred = ROOT / "tests" / "fixtures" / "multiwoz_predictions" / "hdsa.json.gz"
    run_cli("score", "multiwoz", str(pred), "--resamples", "100", "-o", str(out))
    return out
