"""The toy plug-in's results in the report, compare and a panel, with no edit outside its
folder: its own leaderboard columns, label values, role titles and transcript rendering come
from the profile it registers (``PROFILE`` in ``todeval_toy/game.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.helpers import browser_session, screenshot
from tests.report.toy_panel import toy_panel
from todeval.cli import main
from todeval.report import boards, build_html, load_inputs

WAIT_S = 30


def _run(out: Path, *argv: str) -> Path:
    assert main(["run", "toy", "--quiet", "--out", str(out), *argv]) == 0
    return out


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("toy-runs")
    return {
        "bisect": _run(base / "bisect"),
        "random": _run(base / "random", "--guesser", "random"),
        "strict": _run(base / "strict", "--guesser", "random", "--protocol", "strict"),
        "panel": toy_panel(base / "toy-panel"),
        "llm": _llm_run(base),
    }


def _llm_run(base: Path) -> Path:
    """The LLM guesser on a scripted model (always 5): its model calls are in the transcript."""
    script = base / "guess5.json"
    script.write_text('{"default": "{\\"guess\\": 5}"}', encoding="utf-8")
    model = f"scripted:{script}"
    return _run(base / "llm", "--guesser", "llm", "--guesser-model", model, "--limit", "2")


def test_toy_board_uses_its_profile(toy_runs: dict[str, Path]) -> None:
    inputs = load_inputs([toy_runs["bisect"], toy_runs["random"]])
    (board,) = boards(inputs)
    assert board.profile.benchmark == "toy" and board.task_set == "numbers"
    assert [c.heading for c in board.profile.columns] == ["Found", "Found (macro)", "Guesses"]
    assert [r.key for r in board.rows] == ["bisect", "random"]  # bisect always finds it
    assert board.rows[0].roles == {"guesser": "bisect", "host": "rule"}
    html = build_html(inputs)
    assert "<th" in html and "Guesser" in html and "Host" in html
    assert 'id="tax-ending"' in html and "out of guesses" in html  # the label's own titles
    assert "Found per range size" in html  # the profile's group noun
    assert "Found = share of games where the secret was guessed" in html  # its notes
    for word in ("Booking", "domain group", "User sim"):
        assert word not in html.split('id="todeval-data"')[0]


def test_toy_runs_compare_and_protocols_are_kept_apart(
    toy_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(toy_runs["bisect"]), str(toy_runs["random"])]) == 0
    out = capsys.readouterr().out
    assert "toy.success" in out and "guesser" in out
    assert main(["compare", str(toy_runs["random"]), str(toy_runs["strict"])]) == 4
    err = capsys.readouterr().err
    assert "protocol" in err and "strict" in err


def test_toy_panel_in_the_report(toy_runs: dict[str, Path]) -> None:
    html = build_html(load_inputs([toy_runs["panel"]]))
    assert 'id="panel-toy-panel-spread"' in html
    assert "best / worst host" in html


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


def test_toy_transcript_renders_from_its_profile(
    driver: Any, toy_runs: dict[str, Path], tmp_path: Path
) -> None:
    """Headless Chromium: the leaderboard has the toy's columns, and an episode shows the
    guesser's and host's turns titled by the profile, the guesses box and the ending label."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = tmp_path / "toy.html"
    inputs = load_inputs([toy_runs["bisect"], toy_runs["random"], toy_runs["panel"]])
    page.write_text(build_html(inputs), encoding="utf-8")
    driver.get(page.as_uri())
    wait = WebDriverWait(driver, WAIT_S)
    wait.until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))
    heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#lb-toy-run thead th")]
    assert {"Guesser", "Host", "Found", "Guesses"} <= set(heads)
    # an #ep= link opens the episode on its own page (the report's sections hidden)
    driver.execute_script("location.hash = '#ep=random/n10-07%230'")
    wait.until(
        lambda d: (
            d.execute_script("return document.documentElement.dataset.episode") == "random/n10-07#0"
        )
    )
    assert not driver.find_element(By.ID, "lb-toy-run").is_displayed()
    detail = driver.find_element(By.ID, "ep-detail")
    wait.until(lambda d: detail.find_elements(By.CSS_SELECTOR, ".msg"))
    who = [
        w.get_attribute("textContent") for w in detail.find_elements(By.CSS_SELECTOR, ".msg .who")
    ]
    assert who[:2] == ["Guesser", "Host"]
    kinds = {
        e.get_attribute("data-kind") for e in detail.find_elements(By.CSS_SELECTOR, "[data-kind]")
    }
    assert {"guess", "answer"} <= kinds and not detail.find_elements(By.CSS_SELECTOR, ".unknown")
    text = str(detail.get_attribute("textContent"))
    assert "Guesses" in text and "How the game ended" in text and "found in 2 guesses" in text
    screenshot(driver, "report-toy-transcript.png")


def test_model_calls_show_collapsed_under_their_turn(
    driver: Any, toy_runs: dict[str, Path], tmp_path: Path
) -> None:
    """Headless Chromium: each model call of the LLM guesser is a collapsed box under its turn;
    opened, it shows the prompt sent and the raw reply."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    run = toy_runs["llm"]
    first = (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()[0]
    episode = json.loads(first)["episode_id"].replace("#", "%23")
    page = tmp_path / "llm.html"
    page.write_text(build_html(load_inputs([run])), encoding="utf-8")
    driver.get(page.as_uri() + f"#ep=llm/{episode}")
    wait = WebDriverWait(driver, WAIT_S)
    detail = driver.find_element(By.ID, "ep-detail")
    wait.until(lambda d: detail.find_elements(By.CSS_SELECTOR, "details.model-call"))
    calls = detail.find_elements(By.CSS_SELECTOR, "details.model-call")
    assert calls and all(c.get_attribute("open") is None for c in calls)  # collapsed
    summary = calls[0].find_element(By.TAG_NAME, "summary")
    assert "model call" in str(summary.get_attribute("textContent")).lower()
    assert "tokens" in summary.text
    assert not calls[0].find_elements(By.CSS_SELECTOR, ".call-msg pre")[0].is_displayed()
    summary.click()
    wait.until(lambda d: calls[0].get_attribute("open") is not None)
    shown = [p.text for p in calls[0].find_elements(By.CSS_SELECTOR, ".call-msg pre")]
    assert any("guessing game" in s for s in shown) and shown[-1] == '{"guess": 5}'
    blocks = detail.find_elements(By.CSS_SELECTOR, ".transcript > .turn-block")
    turns = [b.find_element(By.CSS_SELECTOR, ".turn").get_attribute("textContent") for b in blocks]
    assert turns[:2] == ["Turn 1", "Turn 2"]
    assert calls[0] in blocks[0].find_elements(By.CSS_SELECTOR, "details.model-call")  # its turn
    screenshot(driver, "report-model-calls.png")
