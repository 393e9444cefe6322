"""The report and the view server in real headless Chromium (selenium + system chromedriver).

Checks what a reader sees: leaderboard rows, rendered figures, clicking a row filters the
transcript list, clicking an episode shows its transcript, and that transcripts full of
script payloads execute nothing. Screenshots go to test-artifacts/. With CI=true a missing
chromium, chromedriver or selenium fails these tests instead of skipping them.
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

from tests.report.helpers import (
    PAYLOADS,
    browser_session,
    css,
    run_cli,
    screenshot,
    wait,
)
from tests.report.test_view_server import start_view
from todeval.report import build_html, load_inputs

WAIT_S = 30


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


_wait = wait


def _open(driver: Any, url: str) -> None:
    driver.get(url)
    _wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.ready"))


def _js(driver: Any, script: str) -> Any:
    return driver.execute_script(script)


def _count(driver: Any) -> str:
    return str(_js(driver, "return document.getElementById('f-count').textContent"))


def _no_alert(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert  # noqa: B018 (the property raises when no alert is open)


def _severe_logs(driver: Any) -> list[Any]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


_css = css


def _detail(driver: Any) -> str:
    return str(_js(driver, "return document.getElementById('ep-detail').textContent"))


def _assert_booking_transcript(driver: Any) -> None:
    """A booking episode (test/000: one hotel search, one booking) as the profile draws it."""
    assert len(_css(driver, "#ep-detail .msg[data-actor=user]")) >= 2
    assert _css(driver, "#ep-detail .msg.right[data-actor=system]")  # the subject's side
    assert [c.text for c in _css(driver, "#ep-detail .ev.call code")][:2] == [
        "retrievefromhoteldb",
        "validatehotelbooking",
    ]
    assert _css(driver, "#ep-detail .ev.result table.rows")
    good = _css(driver, "#ep-detail .ev.good")
    assert good and "BOOKING CONFIRMED" in good[0].text.upper()
    assert re.search(r"[A-Z0-9]{6} — Booking confirmed", good[0].text)
    text = _detail(driver)
    for part in ("Goal · hotel", "Booking · hotel", "booked row", "booking slots"):
        assert part in text, part
    assert "Scores · hotel" in text and "✓ inform" in text and "✓ booked" in text
    assert "domain group hotel" in text and "System: rule" in text


def test_report_file_in_chromium(driver: Any, runs: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    inputs = load_inputs(list(runs.values()), transcripts="all")
    report.write_text(build_html(inputs), encoding="utf-8")
    url = report.as_uri()
    _open(driver, url)

    # one board per task set
    rows = _css(driver, "#lb-booking-test-run tbody tr")
    assert [r.get_attribute("data-run") for r in rows] == ["rule-agenda", "rule-corpus", "mono-toy"]
    unreal = _css(driver, "#lb-booking-unrealistic-run tbody tr")
    assert [r.get_attribute("data-run") for r in unreal] == ["rule-unreal"]
    assert (
        "0.897" in rows[1].text and "[0.838, 0.949]" in rows[1].text and "$0.0024" in rows[2].text
    )

    # figures are rendered SVG with one mark per run / group / class, and real size
    assert len(_css(driver, "#fig-scatter-booking-test g.pt")) == 3
    # the unrealistic board's only run costs $0: a line instead of an empty frame
    assert not _css(driver, "#fig-scatter-booking-unrealistic")
    assert "Costs are all $0 on booking" in _css(driver, "#cost-zero")[0].text
    assert len(_css(driver, "#fig-groups-booking-test g.bar")) == 6 + 6 + 6
    assert len(_css(driver, "#fig-groups-booking-unrealistic g.bar")) == 2  # --limit 30
    assert len(_css(driver, "#fig-tax-failure_class g.seg")) == 1 + 1 + 3 + 2
    assert len(_css(driver, "#fig-panel-auto-0 g.fpt")) == 2
    assert len(_css(driver, "svg.eb")) == 4
    for fig in ("fig-scatter-booking-test", "fig-groups-booking-test", "fig-tax-failure_class"):
        box = _js(driver, f"return document.getElementById('{fig}').getBoundingClientRect()")
        assert box["width"] > 300 and box["height"] > 100, (fig, box)
    marker_w = _js(
        driver,
        "return document.querySelector('#fig-scatter-booking-test g.pt[data-run=\"mono-toy\"]')"
        ".getBBox().width",
    )
    assert marker_w > 5
    screenshot(driver, "report-top.png")

    # clicking a leaderboard row (not its link) filters the transcript list to that run
    rows[1].find_elements("css selector", "td")[2].click()
    _wait(driver, lambda d: _count(d).startswith("117 of 381"))
    assert "run=rule-corpus" in _js(driver, "return location.hash")
    subs = [e.text for e in _css(driver, ".ep-row .sub")]
    assert len(subs) == 117 and all(s.startswith("rule-corpus") for s in subs)
    top = _js(driver, "return document.getElementById('transcripts').getBoundingClientRect().top")
    assert abs(top) < 120  # scrolled to the browser

    # clicking an episode shows its transcript, drawn from the booking profile's views:
    # messages, tool calls by name, DB rows, the booking result, goal and bookings per domain
    listed = [r.get_attribute("data-ep") for r in _css(driver, ".ep-row")]
    assert listed[0] == "rule-corpus/test/007-sng01353#0"  # failures first, then successes
    first = _css(driver, '.ep-row[data-ep="rule-corpus/test/000-sng01936#0"]')[0]
    episode_id = "test/000-sng01936#0"
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", first)
    first.click()
    _wait(
        driver,
        lambda d: _css(d, "#ep-detail h3") and _css(d, "#ep-detail h3")[0].text == episode_id,
    )
    _assert_booking_transcript(driver)
    screenshot(driver, "report-transcript.png")

    # a taxonomy cell links to that run's episodes of that class
    link = _css(driver, 'a[href="#run=rule-corpus&label=failure_class%3Awrong_booking"]')[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    _wait(driver, lambda d: _count(d).startswith("6 of 381"))
    assert _js(driver, "return document.getElementById('f-class').value") == "wrong_booking"

    # a scatter point filters to its run
    point = _css(driver, '#fig-scatter-booking-test g.pt[data-run="mono-toy"]')[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", point)
    point.click()
    _wait(driver, lambda d: _count(d).startswith("117 of 381"))
    assert _js(driver, "return document.getElementById('f-run').value") == "mono-toy"

    # full-text search across runs, with highlighting in the transcript
    _css(driver, "#f-clear")[0].click()
    box = _css(driver, "#f-q")[0]
    box.send_keys("volcano")
    _wait(driver, lambda d: not _count(d).startswith("381 of"))
    n = int(_count(driver).split(" ", 1)[0])
    assert 0 < n < 381
    assert all(e.text.startswith("rule-unreal") for e in _css(driver, ".ep-row .sub"))
    _css(driver, ".ep-row")[0].click()
    _wait(driver, lambda d: _css(d, "#ep-detail mark"))
    assert _css(driver, "#ep-detail mark")[0].text.lower() == "volcano"

    # each episode has a stable anchor
    anchor = quote("rule-corpus/test/000-sng01936#0", safe="")
    _open(driver, f"{url}#ep={anchor}")
    _wait(
        driver,
        lambda d: (
            _css(d, "#ep-detail h3") and _css(d, "#ep-detail h3")[0].text == "test/000-sng01936#0"
        ),
    )
    assert "run rule-corpus" in _css(driver, "#ep-detail .facts")[0].text
    assert not _severe_logs(driver)


def test_payloads_in_transcripts_execute_nothing(
    driver: Any, xss: Path, runs: dict[str, Path], tmp_path: Path
) -> None:
    report = tmp_path / "xss.html"
    report.write_text(build_html(load_inputs([xss, runs["rule"]])), encoding="utf-8")
    _open(driver, report.as_uri())
    xss_key = load_inputs([xss]).runs[0].key
    driver.execute_script("location.hash = arguments[0]", "#run=" + quote(xss_key, safe=""))
    _wait(driver, lambda d: _count(d).startswith(f"{len(PAYLOADS)} of"))
    for i in range(len(PAYLOADS)):
        row = _css(driver, ".ep-row")[i]
        key = row.get_attribute("data-ep")
        row.click()
        _wait(driver, lambda d, key=key: key.partition("/")[2] in _detail(d))
        assert _js(driver, "return typeof window.__pwned") == "undefined"
    # the episode page of each, too (its own layout, the same renderer)
    keys = [row.get_attribute("data-ep") for row in _css(driver, ".ep-row")]
    for key in keys:
        driver.execute_script("location.hash = arguments[0]", "#ep=" + quote(key, safe=""))
        _wait(
            driver,
            lambda d, key=key: _js(d, "return document.documentElement.dataset.episode") == key,
        )
        assert _js(driver, "return typeof window.__pwned") == "undefined"
    driver.execute_script("location.hash = arguments[0]", "#run=" + quote(xss_key, safe=""))
    last = next(k for k in keys if f"/test/{len(PAYLOADS) - 1:03d}-" in k)
    _wait(driver, lambda d: _css(d, ".ep-row"))
    driver.execute_script(
        "[...document.querySelectorAll('.ep-row')].find((r) => r.dataset.ep === arguments[0])"
        ".click()",
        last,
    )
    _wait(driver, lambda d: "and <b>bold</b>" in _detail(d))
    detail = _js(driver, "return document.getElementById('ep-detail').textContent")
    assert "and <b>bold</b> & ampersand" in detail  # shown as text, not markup
    for el in _css(driver, "details"):
        driver.execute_script("arguments[0].open = true", el)
    box = _css(driver, "#f-q")[0]
    box.send_keys("<img src=x")
    _wait(driver, lambda d: _count(d).startswith("2 of"))
    _css(driver, ".ep-row")[0].click()
    _wait(driver, lambda d: _css(d, "#ep-detail mark"))
    screenshot(driver, "report-xss.png")
    _no_alert(driver)
    assert _js(driver, "return typeof window.__pwned") == "undefined"
    assert _js(driver, "return document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert _js(driver, "return document.querySelectorAll('[onload], [onerror]').length") == 0
    assert _js(driver, "return document.scripts.length") == 2
    assert not _severe_logs(driver)


def test_view_server_in_chromium(
    driver: Any, xss: Path, runs: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(runs["rule"], root / "alpha")
    shutil.copytree(xss, root / "xss")
    proc, url = start_view(root, "--poll", "0.5")
    try:
        _open(driver, url)
        boards = "table.lb[id^='lb-booking-'] tbody tr"
        assert [r.get_attribute("data-run") for r in _css(driver, boards)] == ["alpha", "xss"]
        _css(driver, "#lb-booking-test-run tbody tr")[0].find_elements("css selector", "td")[
            2
        ].click()
        _wait(driver, lambda d: _count(d).startswith("117 of 124"))
        _css(driver, ".ep-row")[3].click()
        _wait(driver, lambda d: _css(d, "#ep-detail .msg[data-actor=system]"))
        assert _css(driver, "#live")
        # a new run appears: the page notices the version change and reloads, keeping its state
        shutil.copytree(runs["corpus"], root / "beta")
        _wait(driver, lambda d: len(_css(d, boards)) == 3)
        _wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.ready"))
        assert "run=alpha" in _js(driver, "return location.hash")
        assert _count(driver).startswith("117 of 241")
        assert _css(driver, "#ep-detail .msg[data-actor=system]")
        screenshot(driver, "view-live.png")
        _no_alert(driver)
        assert _js(driver, "return typeof window.__pwned") == "undefined"
        assert not _severe_logs(driver)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def _rank_cells(driver: Any) -> list[tuple[str, str, bool]]:
    """Each board row's run, its rank cell's text as shown, and whether its rank interval
    (``.rk``) is displayed."""
    out = []
    for cell in _css(driver, "table.lb tbody tr[data-run] td.rank"):
        row = cell.find_element("xpath", "..")
        shown = [e.is_displayed() for e in cell.find_elements("css selector", ".rk")]
        out.append((str(row.get_attribute("data-run")), str(cell.text), any(shown)))
    return out


def test_view_boards_show_the_reports_rank_intervals_in_chromium(
    driver: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    """The live page's boards show the same rank intervals and tiers as the static report of
    the same runs (computed by the report's own code from the index's task values)."""
    root = tmp_path / "runs"
    root.mkdir()
    names = ("rule", "corpus", "llm")
    for name in names:
        shutil.copytree(runs[name], root / name)
    static = tmp_path / "report.html"
    run_cli("report", *(str(root / n) for n in names), "-o", str(static))
    driver.get("about:blank")  # an earlier test's live page may have polled a stopped server
    driver.get_log("browser")
    _open(driver, static.as_uri())
    want = _rank_cells(driver)
    assert sum(shown for *_, shown in want) >= 2, want
    assert all(re.search(r"\[\d+(–\d+)?\] T\d", text) for _, text, shown in want if shown)
    proc, url = start_view(root, "--poll", "5")
    try:
        _open(driver, url)
        assert _rank_cells(driver) == want
        screenshot(driver, "view-rank-intervals.png")
        assert not _severe_logs(driver)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_static_report_says_what_it_left_out(
    driver: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    report = tmp_path / "capped.html"
    report.write_text(build_html(load_inputs([runs["corpus"], runs["unrealistic"]])), "utf-8")
    driver.get("about:blank")
    driver.get_log("browser")  # what earlier tests left
    _open(driver, report.as_uri())
    note = _css(driver, "#left-out")[0]
    assert note.is_displayed() and "rule-corpus: shown 50 of 117" in note.text
    assert "Left out: 67 of 147 transcripts" in note.text
    assert _count(driver).startswith("80 of 80")
    options = [o.text for o in _css(driver, "#f-run option")]
    assert "rule-corpus — System: rule · User sim.: corpus (50 of 117 shown)" in options
    assert "rule-unreal — System: rule · User sim.: agenda (30)" in options
    # every failure of the corpus run is embedded; the last successes are not
    driver.execute_script("location.hash = arguments[0]", "#run=rule-corpus&outcome=failure")
    _wait(driver, lambda d: _count(d).startswith("12 of 80"))
    anchor = quote("rule-corpus/test/116-sng01434#0", safe="")
    driver.execute_script("location.hash = arguments[0]", f"#ep={anchor}")
    _wait(driver, lambda d: "is not in this report" in _detail(d))
    assert "its run shows 50 of 117 transcripts, failures first" in _detail(driver)
    # an embedded booking transcript, drawn from the profile sent as data
    anchor = quote("rule-corpus/test/000-sng01936#0", safe="")
    driver.execute_script("location.hash = arguments[0]", f"#ep={anchor}")
    _wait(
        driver,
        lambda d: (
            _js(d, "return document.documentElement.dataset.episode")
            == "rule-corpus/test/000-sng01936#0"
        ),
    )
    _assert_booking_transcript(driver)
    assert not _severe_logs(driver)


def test_big_report_embeds_transcripts_gzipped_and_shows_them_all(
    driver: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    """Above ``compress_above`` the transcripts are embedded gzipped (``episodes_gz``) and the
    page inflates them with DecompressionStream: the same list, filters, search and pages."""
    report = tmp_path / "packed.html"
    inputs = load_inputs([runs["corpus"], runs["unrealistic"]])
    report.write_text(build_html(inputs, compress_above=0), "utf-8")
    assert '"episodes_gz":"H4sI' in report.read_text("utf-8")  # gzip's magic, base64
    driver.get("about:blank")
    driver.get_log("browser")
    _open(driver, report.as_uri())
    assert _count(driver).startswith("80 of 80")
    driver.execute_script("location.hash = arguments[0]", "#run=rule-corpus&outcome=failure")
    _wait(driver, lambda d: _count(d).startswith("12 of 80"))
    anchor = quote("rule-corpus/test/000-sng01936#0", safe="")
    driver.execute_script("location.hash = arguments[0]", f"#ep={anchor}")
    _wait(
        driver,
        lambda d: (
            _js(d, "return document.documentElement.dataset.episode")
            == "rule-corpus/test/000-sng01936#0"
        ),
    )
    _assert_booking_transcript(driver)
    driver.execute_script("location.hash = arguments[0]", "#q=volcano")
    _wait(driver, lambda d: not _count(d).startswith("80 of"))
    assert 0 < int(_count(driver).split(" ", 1)[0]) < 80
    assert all(e.text.startswith("rule-unreal") for e in _css(driver, ".ep-row .sub"))
    assert not _severe_logs(driver)


def _choose(driver: Any, select_id: str, value: str) -> None:
    driver.execute_script(
        "const s = document.getElementById(arguments[0]); s.value = arguments[1];"
        "s.dispatchEvent(new Event('change'));",
        select_id,
        value,
    )


def test_view_mode_lists_filters_searches_and_renders_each_profile(
    driver: Any, runs: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(runs["corpus"], root / "corpus")
    run_cli("run", "toy", "--guesser", "random", "--out", str(root / "toy"), "--quiet")
    proc, url = start_view(root, "--poll", "5")
    try:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        driver.get("about:blank")
        driver.get_log("browser")  # what earlier tests left
        facets = _api(port, "/api/facets")
        total = facets["total"]
        assert facets["run"] == {"corpus": 117, "toy": total - 117}
        _open(driver, url)
        assert _js(driver, "return document.getElementById('todeval-data').textContent.length")
        assert _count(driver) == f"{total} of {total} episodes"
        assert len(_css(driver, ".ep-row")) == min(total, 200)

        # a filter (server-side): failures of both benchmarks, then the toy's failure class
        _choose(driver, "f-outcome", "failure")
        n_fail = facets["outcome"]["failure"]
        _wait(driver, lambda d: _count(d) == f"{n_fail} of {total} episodes")
        assert {e.text for e in _css(driver, ".ep-row .oc")} == {"failure"}
        classes = [o.text for o in _css(driver, "#f-class option")]
        assert f"out of guesses [turn_cap] ({facets['fc']['turn_cap']})" in classes
        _choose(driver, "f-class", "turn_cap")
        _wait(driver, lambda d: _count(d).startswith(f"{facets['fc']['turn_cap']} of"))
        assert all(" · toy · " not in s.text for s in _css(driver, ".ep-row .sub"))
        assert all("out of guesses" in s.text for s in _css(driver, ".ep-row .sub"))

        # a search (server-side, words by prefix), highlighted in the transcript
        _css(driver, "#f-clear")[0].click()
        _wait(driver, lambda d: _count(d) == f"{total} of {total} episodes")
        _css(driver, "#f-q")[0].send_keys("guesthou")
        _wait(driver, lambda d: not _count(d).startswith(f"{total} of"))
        n = int(_count(driver).split(" ", 1)[0])
        assert 0 < n < 117
        assert all(s.text.startswith("corpus") for s in _css(driver, ".ep-row .sub"))
        _css(driver, ".ep-row")[0].click()
        _wait(driver, lambda d: _css(d, "#ep-detail mark"))
        assert _css(driver, "#ep-detail mark")[0].text.lower() == "guesthou"

        # an episode opens from its anchor, drawn from the booking profile
        anchor = quote("corpus/test/000-sng01936#0", safe="")
        driver.execute_script("location.hash = arguments[0]", f"#ep={anchor}")
        _wait(
            driver,
            lambda d: (
                _js(d, "return document.documentElement.dataset.episode")
                == "corpus/test/000-sng01936#0"
            ),
        )
        _assert_booking_transcript(driver)

        # ... and a toy episode with the toy's titles, roles and group noun
        driver.execute_script("location.hash = '#run=toy'")  # back from the page to the list
        _wait(driver, lambda d: _count(d).startswith(f"{total - 117} of"))
        _css(driver, ".ep-row")[0].click()
        _wait(driver, lambda d: _css(d, "#ep-detail .msg[data-actor=host]"))
        who = {e.text.upper() for e in _css(driver, "#ep-detail .msg .who")}
        assert who == {"GUESSER", "HOST"}
        assert _css(driver, "#ep-detail .msg.right[data-actor=guesser]")
        text = _detail(driver)
        assert "How the game ended" in text and "range size" in text
        assert "Guesser: random" in text and "Host: rule" in text
        assert _css(driver, "#ep-detail .ev.end")
        assert _js(driver, "return document.getElementById('f-group-name').textContent") == "Group"
        screenshot(driver, "view-toy.png")
        assert not _severe_logs(driver)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def _api(port: int, path: str) -> Any:
    import http.client
    import json

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path)
    body = conn.getresponse().read()
    conn.close()
    return json.loads(body)


def test_view_shows_more_of_a_search_by_cursor_in_chromium(driver: Any, tmp_path: Path) -> None:
    """ "show more" under a search continues after the last row shown (the server's `next`):
    the list the page builds in two steps is the server's whole list, in order, once each."""
    root = tmp_path / "runs"
    root.mkdir()
    run_cli("run", "toy", "--guesser", "random", "--trials", "20", "--out", str(root / "toy"))
    proc, url = start_view(root, "--poll", "5")
    try:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        whole = _api(port, "/api/episodes?q=found&limit=2000")
        every = _api(port, "/api/facets")["total"]
        assert every > whole["total"] > 200 and whole["next"]  # a strict subset, > 1 page
        want = [f"{r['run']}/{r['id']}" for r in whole["rows"]]
        driver.get("about:blank")
        driver.get_log("browser")  # what earlier tests' pages left (a stopped server polled)
        _open(driver, url)
        _css(driver, "#f-q")[0].send_keys("found")
        rows_js = "return Array.from(document.querySelectorAll('.ep-row'), e => e.dataset.ep)"
        _wait(  # the search's first page (each key typed redraws the list)
            driver,
            lambda d: (
                _count(d).startswith(f"{whole['total']} of") and _js(d, rows_js) == want[:200]
            ),
        )
        _js(  # the page's requests from now on
            driver,
            "window.__asked = []; var f = window.fetch; window.fetch = function (u, o) "
            "{ window.__asked.push(String(u)); return f.call(this, u, o); };",
        )
        _js(driver, "document.querySelector('.ep-more button').click()")
        _wait(driver, lambda d: len(_js(d, rows_js)) == min(whole["total"], 400))
        assert _js(driver, rows_js) == want[:400]
        asked = [u for u in _js(driver, "return window.__asked") if "api/episodes" in u]
        assert len(asked) == 1 and "after=" in asked[0] and "offset=200" in asked[0], asked
        assert not _severe_logs(driver)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
