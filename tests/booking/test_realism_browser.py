"""The blind "which one is the person?" test end to end: exported from ``booking-realism``,
answered on the annotation page in headless Chromium (by keyboard and by clicking), scored
against the key (accuracy with a Wilson interval) and, with a second annotator, agreement."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.annotation.conftest import Served
from tests.booking.test_realism import _user_model
from tests.report.helpers import browser_session, css, wait
from todeval.annotation.items import merge_answers, read_items, read_key
from todeval.annotation.simulate import simulate
from todeval.benchmarks.booking.analysis.realism.blind import blind_score
from todeval.cli import main


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


def _text(driver: Any, element_id: str) -> str:
    return str(driver.execute_script(f"return document.getElementById('{element_id}').textContent"))


def test_blind_test_answered_in_chromium_and_scored(
    driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "cache"))
    items_path = tmp_path / "blind.jsonl"
    spec = f"booking-realism:test,user-model={_user_model(tmp_path)},n=12"
    argv = ["annotate", "export", "--from", spec, "--kind", "pairwise", "--n", "6"]
    assert main([*argv, "-o", str(items_path)]) == 0
    items = read_items(items_path)
    key = read_key(tmp_path / "blind.key.jsonl")
    total = len(items)
    assert total == 6
    # the annotator finds the person in the first four items and misses the last two
    picks = []
    for k, item in enumerate(items):
        real = next(iter(key[item.id]))
        picks.append(real if k < 4 else ("b" if real == "a" else "a"))
    served = Served(items_path, "dana")
    try:
        driver.get(served.url)
        wait(driver, lambda d: d.execute_script("return document.body.dataset.ready"))
        for k, pick in enumerate(picks):
            wait(driver, lambda d, k=k: _text(d, "position") == f"Item {k + 1} of {total}")
            context = _text(driver, "context")
            assert items[k].turns[0].text in context  # the corpus prefix is shown
            choices = css(driver, "#choices .choice")
            assert len(choices) == 2  # no "can't tell": a forced choice
            if k % 2:
                choices[0 if pick == "a" else 1].click()
            else:
                ActionChains(driver).send_keys("1" if pick == "a" else "2").perform()
            wait(driver, lambda d, k=k: _text(d, "progress") == f"{k + 1} / {total} answered")
            ActionChains(driver).send_keys(Keys.ENTER).perform()
        wait(
            driver, lambda d: not d.execute_script("return document.getElementById('done').hidden")
        )
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, severe
    finally:
        served.stop()
    path = served.state.log.path
    answers = merge_answers([path])
    assert {i: s["dana"] for i, s in answers.items()} == {
        it.id: frozenset({p}) for it, p in zip(items, picks, strict=True)
    }
    capsys.readouterr()
    assert main(["booking", "realism", "score", str(path), "--json"]) == 0  # key found
    report = json.loads(capsys.readouterr().out)
    dana = report["per_annotator"][0]
    assert (dana["who"], dana["correct"], dana["n"]) == ("dana", 4, 6)
    assert dana["wilson_low"] < 4 / 6 < dana["wilson_high"]
    assert report["cohen"] is None  # one annotator: no agreement
    # a second annotator: agreement appears, from the existing annotation statistics
    other = simulate(items_path, "eve", noise=0.3, seed=4)
    both = blind_score(merge_answers([path, other]), key, resamples=50)
    assert both.annotators == ["dana", "eve"] and both.fleiss is not None
    assert main(["booking", "realism", "score", str(path), str(other), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "dana: 0.667" in out and "agreement: cohen" in out
