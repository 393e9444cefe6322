"""The episode page (``#ep=run/episode``) in headless Chromium, in the file report and in
``todeval view``: opened from its link on a fresh load, it shows the episode alone -- its
timeline with each model call expandable in place, the score and how it was computed (the
benchmark's explainer, or the generic view), the review's verdict with its evidence turn
highlighted -- and the previous / next failure keys move along the failures under the list's
filters. With CI=true a missing chromium, chromedriver or selenium fails these tests.
"""

from __future__ import annotations

import re
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.report.helpers import browser_session, css, run_cli, screenshot, wait
from tests.report.layout import overflowing, sideways_tables
from tests.report.test_view_server import start_view
from todeval.core.records import EpisodeReview
from todeval.report import build_html, load_inputs
from todeval.runner.store import RunDirectory

FIRST = "test/000-sng01936#0"  # mono-toy: no booking; the review finds a fault in turn 5
SECOND = "test/001-sng0792#0"
ESCAPE = "\ue00c"  # selenium's ESCAPE (selenium is imported only where the tests run)


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


def _js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def _shown(driver: Any) -> str:
    return str(_js(driver, "return document.documentElement.dataset.episode || ''"))


def _open_page(driver: Any, url: str, key: str) -> None:
    """A fresh load of the episode's own link (not a hash change on an open page)."""
    driver.set_window_size(1400, 1000)
    driver.get("about:blank")
    driver.get(f"{url}#ep={quote(key, safe='')}")
    wait(driver, lambda d: _shown(d) == key and d.execute_script("return !!document.body"))


def _press(driver: Any, key: str) -> None:
    css(driver, "body")[0].send_keys(key)


def _review(run_dir: Path) -> EpisodeReview:
    """The review stored in FIRST's record (the page shows it as written)."""
    for record in RunDirectory(run_dir).iter_episodes():
        if record.episode_id == FIRST and record.review is not None:
            return record.review
    raise AssertionError(f"{FIRST} has no review in {run_dir}")


def _check_episode_page(
    driver: Any, run: str, tmp: Path, name: str, prev: str | None, stored: EpisodeReview
) -> None:
    key = f"{run}/{FIRST}"
    # the episode alone, at the top of the window: no report around it, no blank page
    assert "ep-page" in _js(driver, "return document.documentElement.className")
    assert not css(driver, "#leaderboard")[0].is_displayed()
    assert not css(driver, "#ep-list")[0].is_displayed()
    head = css(driver, "#ep-detail h3")[0]
    assert head.is_displayed() and head.text == FIRST
    assert 0 <= _js(driver, "return arguments[0].getBoundingClientRect().top", head) < 300
    assert key in _js(driver, "return document.title")

    # the timeline: turns, messages, model calls closed until opened in place
    timeline = css(driver, "#ep-timeline")[0]
    assert len(css(driver, "#ep-timeline .turn-block")) == 5
    calls = css(driver, "#ep-timeline details.model-call")
    assert len(calls) == 4 and not any(c.get_attribute("open") for c in calls)
    summary = calls[0].find_element("css selector", "summary")
    assert "toy-gpt" in summary.text and "900 + 40 tokens" in summary.text
    assert re.search(r"900 \+ 40 tokens · [0-9.]+ ms · \$0\.00051$", summary.text)
    summary.click()
    wait(driver, lambda d: calls[0].get_attribute("open") is not None)
    opened = calls[0].text
    assert "2 message(s) sent" in opened and "booking assistant" in opened
    assert "followup" in opened  # the reply's tool call
    assert re.search(r"\+\d+\.\d\d s", timeline.text)  # each event's time

    # the score and how it was computed: booking's explainer, from the record's details
    score = css(driver, "#ep-score")[0]
    assert "booking.booking_accuracy" in score.text
    assert (
        "Booking accuracy 0 (every goal slot must match): 4 of 4 goal slot(s) missed" in score.text
    )
    assert "hotel · 0 of 4 matched" in score.text
    assert len(css(driver, "#ep-score table.checks tr.miss")) == 4

    # the review: verdict, fault, and its evidence turn highlighted in the timeline
    review = css(driver, "#ep-review")[0]
    fault = stored.faults[0]
    assert f"Verdict: {stored.verdict}" in review.text and fault.kind in review.text
    assert fault.evidence in review.text and f"turn {fault.turn}" in review.text
    evidence = css(driver, "#ep-timeline .turn-block.evidence")
    assert [b.get_attribute("data-turn") for b in evidence] == [str(fault.turn)] == ["5"]
    assert f"review: {fault.kind} ({fault.side})" in evidence[0].text
    _js(driver, "window.scrollTo(0, 0)")
    css(driver, "#ep-review a.turn-link")[0].click()
    box = _js(driver, "return arguments[0].getBoundingClientRect().toJSON()", evidence[0])
    assert box["top"] >= 0 and box["bottom"] <= _js(driver, "return innerHeight")  # in view
    assert "flash" in evidence[0].get_attribute("class")
    screenshot(driver, f"{name}-evidence.png")

    # layout: nothing sideways at 1400 px
    assert overflowing(driver) == [] and sideways_tables(driver) == []
    _js(driver, "window.scrollTo(0, 0)")
    driver.save_screenshot(str(tmp / f"{name}.png"))
    screenshot(driver, f"{name}.png")

    # next / previous failure, by key
    wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.neighbours"))
    back = css(driver, "#ep-prev")[0]
    assert back.get_attribute("data-key") == prev  # the failure before: in the run before
    assert (back.get_attribute("disabled") is not None) == (prev is None)
    assert css(driver, "#ep-next")[0].get_attribute("data-key") == f"{run}/{SECOND}"
    _press(driver, "n")
    wait(driver, lambda d: _shown(d) == f"{run}/{SECOND}")
    assert css(driver, "#ep-detail h3")[0].text == SECOND
    assert f"#ep={quote(run, safe='')}%2F" in _js(driver, "return location.hash")
    wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.neighbours"))
    _press(driver, "p")
    wait(driver, lambda d: _shown(d) == key)

    # Esc: back to the list, the episode selected beside it
    _press(driver, ESCAPE)
    wait(
        driver,
        lambda d: "ep-page" not in d.execute_script("return document.documentElement.className"),
    )
    wait(driver, lambda d: css(d, ".ep-row.sel"))
    assert css(driver, ".ep-row.sel")[0].get_attribute("data-ep") == key
    assert css(driver, "#leaderboard")[0].is_displayed()
    assert "sel=" in _js(driver, "return location.hash")


def test_episode_page_in_the_report(driver: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text(build_html(load_inputs([runs["corpus"], runs["llm"]])), encoding="utf-8")
    url = report.as_uri()
    driver.get("about:blank")
    driver.get_log("browser")  # what earlier tests left
    _open_page(driver, url, f"mono-toy/{FIRST}")
    # the failure before it is the last of the run before it (failures across runs)
    before = "rule-corpus/test/109-pmul1762#0"
    _check_episode_page(driver, "mono-toy", tmp_path, "episode-page", before, _review(runs["llm"]))

    # a failure with slots that matched and one that did not, said as the scorer said it
    _open_page(driver, url, "rule-corpus/test/007-sng01353#0")
    score = css(driver, "#ep-score")[0].text
    assert "1 of 7 goal slot(s) missed: hotel info.parking" in score
    miss = css(driver, "#ep-score table.checks tr.miss")
    cells = [td.text for td in miss[0].find_elements("css selector", "td")]
    assert len(miss) == 1 and cells == ["✗", "info.parking", "yes", "no"]
    assert len(css(driver, "#ep-score table.checks tr.hit")) == 6
    assert "Verdict: unclear" in css(driver, "#ep-review")[0].text
    # the list orders failures first across runs: every failure of both runs, then successes
    _press(driver, ESCAPE)
    wait(driver, lambda d: css(d, ".ep-row"))
    outcomes = [r.text for r in css(driver, ".ep-row .oc")]
    first_success = outcomes.index("success")
    assert first_success == 12 + 50 and set(outcomes[first_success:]) == {"success"}
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_episode_page_in_the_view(driver: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(runs["llm"], root / "mono")
    run_cli("run", "toy", "--guesser", "random", "--out", str(root / "toy"), "--quiet")
    proc, url = start_view(root, "--poll", "5")
    try:
        driver.get("about:blank")
        driver.get_log("browser")
        _open_page(driver, url, f"mono/{FIRST}")
        stored = _review(runs["llm"])
        _check_episode_page(driver, "mono", tmp_path, "view-episode-page", None, stored)
        # a benchmark without an explainer: the generic view, its metrics and details
        driver.execute_script("location.hash = '#run=toy'")
        # the list is redrawn for the new hash: read a toy row's key in one script, so a row
        # of the list being replaced is never held across the redraw
        key = wait(
            driver,
            lambda d: d.execute_script(
                "const r = document.querySelector('.ep-row[data-ep^=\"toy/\"]');"
                " return r && r.getAttribute('data-ep');"
            ),
        )
        _open_page(driver, url, key)
        score = css(driver, "#ep-score")[0].text
        assert "registers no score explanation" in score and "toy." in score
        assert not css(driver, "#ep-review")  # the toy registers no reviewer
        assert overflowing(driver) == [] and sideways_tables(driver) == []
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
