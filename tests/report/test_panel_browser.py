"""The toy's panel in real headless Chromium: the table is there, and a cell's link filters
the transcript browser to that pair's run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.helpers import browser_session, css, screenshot, wait
from tests.report.toy_panel import toy_panel
from todeval.report import build_html, load_inputs

WAIT_S = 30


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


_wait = wait


_css = css


def test_toy_panel_table_and_cell_link(driver: Any, tmp_path: Path) -> None:
    panel = toy_panel(tmp_path / "toy-panel")
    report = tmp_path / "report.html"
    report.write_text(build_html(load_inputs([panel])), encoding="utf-8")
    driver.get(report.as_uri())
    _wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.ready"))

    table = _css(driver, "#panel-toy-panel-spread")
    assert table and table[0].is_displayed()
    heads = [th.text for th in _css(driver, "#panel-toy-panel-spread thead th")]
    assert heads[:3] == ["Guesser", "rule", "vague"] and heads[-1] == "best / worst host"
    rows = _css(driver, "#panel-toy-panel-spread tbody tr")
    assert [r.find_element("css selector", "td").text for r in rows] == ["bisect", "random"]
    assert "1.000" in rows[0].text and "0.000" in rows[0].text  # bisect: rule / vague
    ranks = [r.text for r in _css(driver, "#panel-toy-panel-rankings tbody tr")]
    assert ranks == ["rule bisect > random bisect", "vague random > bisect random"]

    link = _css(driver, '#panel-toy-panel-spread a[href="#run=random__vague"]')[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    _wait(driver, lambda d: d.execute_script("return location.hash") == "#run=random__vague")
    _wait(
        driver,
        lambda d: (
            d.execute_script("return document.getElementById('f-run').value") == "random__vague"
        ),
    )
    subs = [e.text for e in _css(driver, ".ep-row .sub")]
    assert len(subs) == 12 and all(s.startswith("random__vague") for s in subs)
    _css(driver, ".ep-row")[0].click()
    _wait(driver, lambda d: _css(d, "#ep-detail h3"))
    detail = driver.execute_script("return document.getElementById('ep-detail').textContent")
    assert "higher or lower" in detail or "correct" in detail  # the vague host's answers
    screenshot(driver, "report-toy-panel.png")
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
