"""The labelling page in headless Chromium: ten items by clicking, ten by keyboard, a reload
that keeps every answer, the finish, and the answer file through ``agreement``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.annotation.conftest import Served
from tests.report.helpers import PAYLOADS, browser_session, css, screenshot, wait
from todeval.annotation.items import merge_answers, read_items
from todeval.annotation.simulate import simulate
from todeval.cli import main


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


def _js(driver: Any, script: str) -> Any:
    return driver.execute_script(script)


def _text(driver: Any, element_id: str) -> str:
    return str(_js(driver, f"return document.getElementById('{element_id}').textContent"))


def _open(driver: Any, url: str) -> None:
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready"))


def _keys(driver: Any, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(driver)
    for k in keys:
        chain.send_keys(k)
    chain.perform()


def _at(driver: Any, n: int, total: int) -> None:
    wait(driver, lambda d: _text(d, "position") == f"Item {n} of {total}")


def _saved(driver: Any, n: int, total: int) -> None:
    wait(driver, lambda d: _text(d, "progress") == f"{n} / {total} answered")


def test_label_reload_finish_and_agree(driver: Any, served: Served, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    items = read_items(served.state.items_path)
    total = len(items)
    assert total == 20
    expected: dict[str, frozenset[str]] = {}
    _open(driver, served.url)
    _at(driver, 1, total)
    assert "<script>" in _text(driver, "context")  # payloads show as text
    assert len(css(driver, "#context .turn.focus")) == 1
    screenshot(driver, "annotate-item.png")
    # ten by clicking: the first candidate, then Next
    for k in range(10):
        _at(driver, k + 1, total)
        css(driver, "#choices .choice")[0].click()
        _saved(driver, k + 1, total)
        expected[items[k].id] = frozenset({items[k].candidates[0].id})
        css(driver, "#next")[0].click()
    # five by keyboard: 1 and 2 (both chosen: multi-choice), Enter
    for k in range(10, 15):
        _at(driver, k + 1, total)
        _keys(driver, "1", "2")
        wait(driver, lambda d: len(css(d, "#choices .choice.on")) == 2)
        _saved(driver, k + 1, total)
        _keys(driver, Keys.ENTER)
        expected[items[k].id] = frozenset(c.id for c in items[k].candidates[:2])
    # Backspace goes back to the last answered item, which shows its answer
    _at(driver, 16, total)
    _keys(driver, Keys.BACKSPACE)
    _at(driver, 15, total)
    # the item shows at once; its saved answer is marked when it arrives
    wait(driver, lambda d: len(css(d, "#choices .choice.on")) == 2)
    # reload: every answer kept, resumed at the first unanswered item
    driver.refresh()
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready"))
    _saved(driver, 15, total)
    _at(driver, 16, total)
    # five more by keyboard: 3 only (then 3 again toggles it off, and 1 on)
    for k in range(15, 20):
        _at(driver, k + 1, total)
        _keys(driver, "3", "3", "1")
        wait(driver, lambda d: len(css(d, "#choices .choice.on")) == 1)
        _saved(driver, k + 1, total)
        _keys(driver, Keys.ENTER)
        expected[items[k].id] = frozenset({items[k].candidates[0].id})
    wait(driver, lambda d: not d.execute_script("return document.getElementById('done').hidden"))
    assert f"All {total} items answered" in _text(driver, "done")
    screenshot(driver, "annotate-done.png")
    assert _js(driver, "return typeof window.__pwned") == "undefined"
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    # the answer file round-trips through agreement (with a simulated second annotator)
    path = served.state.log.path
    ratings = merge_answers([path])
    assert {i: s["alice"] for i, s in ratings.items()} == expected
    other = simulate(served.state.items_path, "bob", noise=0.2, seed=2)
    args = ["annotate", "agreement", str(path), str(other), "--gold", "--resamples", "50"]
    assert main(args) == 0
    assert PAYLOADS[0] not in path.read_text(encoding="utf-8")


def test_pairwise_items_one_choice_and_cant_tell(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    from tests.annotation.conftest import Served
    from todeval.annotation.items import Candidate, ContextTurn, Item

    path = tmp_path / "pairs.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for k in range(3):
            item = Item(
                id=f"pair-{k}",
                kind="pairwise",
                source="toy",
                question="Which one is the person?",
                turns=[ContextTurn(speaker="Agent", text=f"How can I help? {PAYLOADS[1]}")],
                candidates=[
                    Candidate(id="a", text=f"I need a taxi {PAYLOADS[4]}"),
                    Candidate(id="b", text="I NEED A TAXI."),
                ],
                cant_tell=True,
            )
            fh.write(item.model_dump_json() + "\n")
    served = Served(path, "carol")
    try:
        _open(driver, served.url)
        _at(driver, 1, 3)
        assert [b.text.split()[0] for b in css(driver, "#choices .choice")] == ["1", "2", "3"]
        _keys(driver, "1", "3")  # one choice only: 3 (can't tell) replaces 1
        wait(driver, lambda d: len(css(d, "#choices .choice.on")) == 1)
        _saved(driver, 1, 3)
        _keys(driver, Keys.ENTER)
        _at(driver, 2, 3)
        css(driver, "#choices .choice")[1].click()
        _saved(driver, 2, 3)
        _keys(driver, Keys.ENTER)
        _at(driver, 3, 3)
        _keys(driver, "1")
        _saved(driver, 3, 3)
        _keys(driver, Keys.ENTER)
        wait(
            d := driver,
            lambda d: not d.execute_script("return document.getElementById('done').hidden"),
        )
        assert _js(d, "return typeof window.__pwned") == "undefined"
    finally:
        served.stop()
    answers = merge_answers([served.state.log.path])
    assert {i: s["carol"] for i, s in answers.items()} == {
        "pair-0": frozenset({"cant-tell"}),
        "pair-1": frozenset({"b"}),
        "pair-2": frozenset({"a"}),
    }
