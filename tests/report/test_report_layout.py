"""The report's layout in headless Chromium at 1400 px and 800 px window widths.

Built from real offline runs of three benchmarks (26 task types in one of them, costs all $0),
the page is measured with JavaScript: nothing wider than the viewport outside a box that
scrolls horizontally, no two text boxes overlapping in a figure, no number in a transcript's
metric cell over two lines, no empty cost figure, the Wilson note exactly under the tables
with a W cell. Screenshots go to the test's tmp dir. With CI=true a missing chromium,
chromedriver or selenium fails these tests instead of skipping them.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.report.helpers import browser_session, css, rule_run, run_cli, wait
from tests.report.layout import (
    overflowing,
    overlapping_labels,
    sideways_tables,
    wilson_mismatches,
    wrapped_numbers,
)
from todeval.report import build_html, load_inputs

WIDTHS = (1400, 800)
BOOKING = "booking-test-rule-agenda-s0-a-long-run-name"  # as long as the default names get


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, runs: dict[str, Path]) -> Path:
    """clarq (oracle seeker, 60 tasks: many task types), booking (rule on 10 tasks, beside
    a rule and a priced LLM system on all 117 under long run names: a board with a size flag,
    a model in a role cell, cost and a Who failed row each), bargain (keyword)."""
    base = tmp_path_factory.mktemp("layout-runs")
    long_names = [base / f"booking-test-{name}-s0-long-name" for name in ("rule-corpus", "mono")]
    shutil.copytree(runs["corpus"], long_names[0])
    shutil.copytree(runs["llm"], long_names[1])
    quiet = ("--quiet",)
    run_cli(
        "run", "clarq", "--seeker", "oracle", "--limit", "60", "--out", str(base / "clarq"), *quiet
    )
    rule_run(base / BOOKING, "--limit", "10")
    run_cli(
        "run",
        "bargain",
        "--labeller",
        "keyword",
        "--limit",
        "5",
        "--out",
        str(base / "bargain"),
        *quiet,
    )
    paths = [base / "clarq", base / BOOKING, *long_names, base / "bargain"]
    inputs = load_inputs(paths, transcripts=20)
    out = base / "report.html"
    out.write_text(build_html(inputs), encoding="utf-8")
    return out


def _open(driver: Any, url: str, width: int) -> None:
    driver.set_window_size(width, 1000)
    driver.get("about:blank")
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.ready"))


def _show(driver: Any, selector: str, path: Path) -> None:
    """Scroll the element to the top of the window and save a screenshot of the window."""
    element = css(driver, selector)[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", element)
    driver.save_screenshot(str(path))


_SHOWN = "return document.documentElement.dataset.episode"


def _open_episode(driver: Any, run: str) -> str:
    """Open the first transcript of a run; the episode's key."""
    driver.execute_script("location.hash = arguments[0]", f"#run={run}")
    wait(driver, lambda d: css(d, ".ep-row") and css(d, ".ep-row .sub")[0].text.startswith(run))
    row = css(driver, ".ep-row")[0]
    key = f"{run}/{row.find_element('css selector', '.id').text}"
    row.click()
    wait(
        driver, lambda d: d.execute_script("return document.documentElement.dataset.episode") == key
    )
    return key


@pytest.mark.parametrize("width", WIDTHS)
def test_report_layout_at_width(driver: Any, report: Path, tmp_path: Path, width: int) -> None:
    _open(driver, report.as_uri(), width)
    assert driver.execute_script("return document.documentElement.clientWidth") == width

    # the 26 task types: every bar drawn, labels apart, the figure and table inside the page
    assert len(css(driver, "#fig-groups-clarq g.bar")) >= 20
    assert css(driver, "#groups-clarq")
    assert overflowing(driver) == []
    assert overlapping_labels(driver) == []
    if width == 1400:  # no table to scroll sideways (the board, who failed, usage, ...)
        assert sideways_tables(driver) == []
    _show(driver, "#groups", tmp_path / f"groups-{width}.png")

    # bargain's macro F1 is label-macro: its per-depth table says so (not "mean over depths")
    bargain = css(driver, "#groups-bargain")[0]
    assert "mean over labels (not over depths)" in bargain.text
    assert "mean over depths" not in bargain.text and "label-macro" in bargain.text

    # costs all $0 (clarq, bargain): one line instead of a figure; booking's priced run: one
    scatters = [e.get_attribute("id") for e in css(driver, "svg[id^='fig-scatter-']")]
    assert scatters == ["fig-scatter-booking"]
    line = css(driver, "#cost-zero")
    assert line and "costs are all $0" in line[0].text.lower() and "offline" in line[0].text
    _show(driver, "#leaderboard", tmp_path / f"top-{width}.png")

    # the Wilson note under exactly the tables with a W cell (both kinds are on the page)
    marked, plain, bad = wilson_mismatches(driver)
    assert marked >= 3 and plain >= 1 and bad == []

    # transcripts: every metric value on one line, inside its box
    for run in ("clarq", BOOKING, "bargain"):
        key = _open_episode(driver, run)
        n, wrapped = wrapped_numbers(driver)
        assert n >= 3 and wrapped == [], (run, wrapped)
        assert overflowing(driver) == []
        _show(driver, "#ep-detail", tmp_path / f"transcript-{run}-{width}.png")
        # the same episode on its own page (#ep=), every event opened: nothing sideways
        _open(driver, f"{report.as_uri()}#ep={quote(key, safe='')}", width)
        wait(driver, lambda d, key=key: d.execute_script(_SHOWN) == key)
        driver.execute_script("document.getElementById('ep-expand').click()")
        assert css(driver, "#ep-score") and css(driver, "#ep-timeline .turn-block")
        n, wrapped = wrapped_numbers(driver)
        assert n >= 3 and wrapped == [], (run, wrapped)
        assert overflowing(driver) == []
        if width == 1400:
            assert sideways_tables(driver) == []
        driver.save_screenshot(str(tmp_path / f"page-{run}-{width}.png"))
    for png in tmp_path.glob("*.png"):
        assert png.stat().st_size > 5000, png
