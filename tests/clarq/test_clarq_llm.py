"""End to end with models: an LLM seeker (completion and chat), the ``llm`` provider and an LLM
judge against the local OpenAI-compatible test server (a real HTTP process with scripted
replies); an LLM seeker on SmolLM2 (llama.cpp, in process) on one task; and the report over
these runs in headless Chromium with the clarq columns and transcripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends.backend_helpers import require_local_model
from tests.clarq.selfplay import episodes, messages, run_clarq, summary
from tests.report.helpers import chromium_driver, screenshot
from todeval.cli import main
from todeval.report import build_html, load_inputs
from todeval.testing.clarq_model import GOODBYE, GREETING, clarq_script
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

TASKS = ("--task-ids", "Gather_Resources-0", "Escort_Mission-3")
WAIT_S = 30


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with ServerProcess(ServerConfig(script=clarq_script())) as process:
        yield process


def _roles(server: ServerProcess) -> list[str]:
    model = f"openai:scripted@{server.base_url}"
    roles = ["--seeker", "llm", "--seeker-model", model, "--provider", "llm"]
    return [*roles, "--provider-model", model, "--judge-model", model]


@pytest.fixture(scope="module")
def llm_runs(
    tmp_path_factory: pytest.TempPathFactory, server: ServerProcess
) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("clarq-llm")
    runs = {
        "completion": run_clarq(base / "completion", *TASKS, *_roles(server)),
        "chat": run_clarq(base / "chat", *TASKS, *_roles(server), "--seeker-mode", "chat"),
    }
    stats = server.stats()
    runs["oracle"] = run_clarq(base / "oracle", *TASKS)
    yield {"runs": runs, "stats": stats, "base": base}


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_llm_seeker_provider_and_judge_over_http(llm_runs: dict[str, Any], mode: str) -> None:
    run = llm_runs["runs"][mode]
    for record in episodes(run):
        said = messages(record)
        assert said[1] == GREETING  # the model's 'You: ' stripped
        assert said[-1] == GOODBYE and len(said) == 8
        assert record["details"]["released"] == ["1"]  # pass A released the first node
        decisions = [
            e["data"]["decision"] for e in record["events"] if e["kind"] == "provider_decision"
        ]
        assert decisions == ["gate_pass", "release", "no_release"]
        labels = {k: v for k, v in record["labels"].items() if k != "who_failed"}  # issue 30
        assert labels == {"clarq.end": "goodbye", "clarq.route": "judge"}
        usage = record["usage"]
        assert usage["seeker"]["calls"] == 4 and usage["judge"]["calls"] == 1
        assert usage["provider"]["calls"] == 4  # gate; classify + pass A; classify (vague)
        assert not usage["seeker"]["estimated"]
    data = summary(run)
    assert data["judge"]["online"] and data["judge"]["new_calls"] == 2
    assert data["judge"]["model"] == "scripted"
    assert data["metrics"]["clarq.success"]["micro"]["value"] == 0.0
    assert any(
        "seeker, provider and judge share the model 'scripted'" in w for w in data["warnings"]
    )
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["roles"]["seeker"]["player"] == ("llm" if mode == "completion" else "llm-chat")
    assert manifest["roles"]["provider"]["prompts_sha256"]
    assert manifest["config"]["seeker_mode"] == mode


def test_every_call_reached_the_server(llm_runs: dict[str, Any]) -> None:
    calls = sum(
        u["calls"]
        for mode in ("completion", "chat")
        for r in episodes(llm_runs["runs"][mode])
        for u in r["usage"].values()
    )
    assert llm_runs["stats"]["requests"] == calls == 2 * 2 * 9


def test_the_response_and_verdict_caches_answer_a_second_run(
    tmp_path: Path, server: ServerProcess, llm_runs: dict[str, Any]
) -> None:
    argv = ["run", "clarq", "--quiet", *TASKS[:2], *_roles(server)]
    assert main([*argv, "--out", str(tmp_path / "first")]) == 0
    before = server.stats()["requests"]
    assert main([*argv, "--out", str(tmp_path / "second")]) == 0
    assert server.stats()["requests"] == before  # every call answered from the caches
    (record,) = episodes(tmp_path / "second")
    usage = record["usage"]
    assert usage["seeker"]["cached_calls"] == usage["seeker"]["calls"] == 4
    assert usage["provider"]["cached_calls"] == usage["provider"]["calls"] == 4
    assert "judge" not in usage  # the verdict came from the verdict file, not a call
    assert record["details"]["judge"][0]["origin"] == "cache"
    assert summary(tmp_path / "second")["judge"]["from_cache"] == 1
    assert messages(record) == messages(episodes(tmp_path / "first")[0])


def test_smollm2_seeker_on_one_task(llm_runs: dict[str, Any]) -> None:
    require_local_model()
    run = run_clarq(
        llm_runs["base"] / "smollm2", "--task-ids", "Gather_Resources-0", "--seeker", "llm",
        "--seeker-model", "llamacpp:smollm2", "--max-tokens", "16", "--max-messages", "2",
    )  # fmt: skip
    llm_runs["runs"]["smollm2"] = run
    (record,) = episodes(run)
    assert record["outcome"] in ("success", "failure")
    usage = record["usage"]["seeker"]
    assert usage["calls"] == 2 and usage["completion_tokens"] > 0 and not usage["estimated"]
    assert usage["flops"] > 0
    assert record["metrics"]["clarq.aql"] >= 0 and "clarq.success" in record["metrics"]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    d = chromium_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield d
    finally:
        d.quit()


def test_report_shows_the_clarq_runs(llm_runs: dict[str, Any], driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    runs = llm_runs["runs"]
    page = tmp_path / "clarq.html"
    page.write_text(build_html(load_inputs(list(runs.values()))), encoding="utf-8")
    driver.get(page.as_uri() + "#sel=completion/en/test/Gather_Resources-0%230")
    wait = WebDriverWait(driver, WAIT_S)
    wait.until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))
    heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "[id^='lb-clarq'] thead th")]
    assert {"Seeker", "Provider", "Judge", "S", "AQD", "AQL", "S depth 1", "Released"} <= set(heads)
    rows = driver.find_elements(By.CSS_SELECTOR, "[id^='lb-clarq'] tbody tr")
    assert len(rows) == len(runs)
    detail = driver.find_element(By.ID, "ep-detail")
    wait.until(lambda d: detail.find_elements(By.CSS_SELECTOR, ".msg"))
    who = [
        w.get_attribute("textContent") for w in detail.find_elements(By.CSS_SELECTOR, ".msg .who")
    ]
    assert who[:3] == ["Jax", "Seeker", "Jax"]
    kinds = {
        e.get_attribute("data-kind") for e in detail.find_elements(By.CSS_SELECTOR, "[data-kind]")
    }
    assert {"seeker_message", "provider_message", "provider_decision"} <= kinds
    assert not detail.find_elements(By.CSS_SELECTOR, ".unknown")
    text = str(detail.get_attribute("textContent"))
    assert "released 1" in text and "gate_pass" in text and "How the dialogue ended" in text
    assert "Released nodes" in text and "Judge questions" in text
    screenshot(driver, "report-clarq-transcript.png")
