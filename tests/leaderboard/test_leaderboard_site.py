"""``todeval leaderboard build`` over real submissions (issue 45.5): short booking runs made with
the CLI -- the rule system, the same rule system as a ``package.module:Class`` in the OS sandbox
(``--isolate``), a scripted chat agent behind its own endpoint (self-run), the first-row
control, the rule system under the strict protocol (a board of its own), the privileged oracle
(refused by verify) and a hand-edited archive (refused) -- prepared as archives and built into
a site that is opened from disk in headless Chromium: the boards with ranks, intervals, tiers
and badges, the refused ones absent from every board and listed as excluded with their
reasons, and a transcripts link that opens the episode viewer. With CI=true a missing
chromium, chromedriver, selenium or bubblewrap fails these tests.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.report.helpers import browser_session, css, screenshot, wait
from tests.report.layout import overflowing, sideways_tables
from todeval.backends.scripted import Script
from todeval.cli import main
from todeval.leaderboard.pages import BADGES, badge, link
from todeval.report.markup import relative_link
from todeval.submission.archive import SystemDeclaration
from todeval.submission.verify import Verdict
from todeval.testing.chat_agent_server import AgentConfig, ChatAgentProcess

IN_PROCESS = "todeval.benchmarks.booking.systems.rule:RuleSystem"
LIMIT = ["--limit", "6", "--quiet"]
HOSTILE = "rule system <img src=x onerror=window.__pwned=1>"


def _cli(*argv: str) -> int:
    return main(list(argv))


def _ok(*argv: str) -> None:
    assert _cli(*argv) == 0, argv


def _bwrap() -> bool:
    if shutil.which("bwrap"):
        return True
    if os.environ.get("CI") == "true":
        pytest.fail("bubblewrap (bwrap) missing -- required with CI=true")
    return False


def _tampered(source: Path, out: Path) -> Path:
    """The archive with one episode line edited after prepare (its listed hash no longer
    matches)."""
    with tarfile.open(source) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]
    with tarfile.open(out, mode="w:gz") as tar:
        for member, data in members:
            if member.name == "run/episodes.jsonl":
                data = data.replace(b'"outcome":"failure"', b'"outcome":"success"', 1)
                data = data.replace(b'"booking.turns":', b'"booking.turns":1', 1)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("leaderboard")
    runs, subs = base / "runs", base / "submissions"
    subs.mkdir()
    plan = {
        "rule": ([], HOSTILE),
        "first-row": (["--system", "first-row"], "a control: books the first row it finds"),
        "oracle": (["--system", "oracle"], "the oracle (handed the goal)"),
        "rule-strict": (["--protocol", "strict"], "the rule system under the strict rules"),
    }
    isolated = _bwrap()
    if isolated:
        plan["sandboxed"] = (
            ["--system", IN_PROCESS, "--isolate"],
            "the rule system's class, run in the sandbox",
        )
    for name, (extra, description) in plan.items():
        _ok("run", "booking", *extra, *LIMIT, "--out", str(runs / name))
        _ok(
            "submit", "prepare", str(runs / name), "-o", str(subs / f"{name}.tar.gz"),
            "--description", description,
        )  # fmt: skip
    # the submitter's own endpoint (a scripted chat agent, a real process on 127.0.0.1)
    script = Script.model_validate({"rules": [], "default": "Sorry, could you say that again?"})
    with ChatAgentProcess(AgentConfig(script=script)) as agent:
        url = f"{agent.root_url}/v1/chat/completions"
        _ok("run", "booking", "--system", "agent", "--system-url", url, *LIMIT,
            "--out", str(runs / "endpoint"))  # fmt: skip
    _ok(
        "submit", "prepare", str(runs / "endpoint"), "-o", str(subs / "endpoint.tar.gz"),
        "--description", "our chat agent, served by us",
    )  # fmt: skip
    # another benchmark (the toy plug-in): a board of its own, its profile's columns
    _ok("run", "toy", "--out", str(runs / "toy"), "--quiet")
    _ok("submit", "prepare", str(runs / "toy"), "-o", str(subs / "toy" / "guesser.tar.gz"),
        "--description", "the toy's guesser")  # fmt: skip
    _tampered(subs / "rule.tar.gz", subs / "edited.tar.gz")
    (subs / "notes.tar.gz").write_text("not an archive\n", encoding="utf-8")
    site = base / "site"
    _ok("leaderboard", "build", str(subs), "-o", str(site), "--quiet")
    return {
        "site": site,
        "subs": subs,
        "isolated": isolated,
        "index": json.loads((site / "site.json").read_text(encoding="utf-8")),
    }


def test_one_board_per_task_set_and_protocol_refused_ones_kept_out(built: dict[str, Any]) -> None:
    index = built["index"]
    boards = {b["id"]: b for b in index["boards"]}
    toy = [b for b in index["boards"] if b["benchmark"] == "toy"]
    assert len(toy) == 1 and toy[0]["primary"] == "toy.success"  # the plug-in's profile
    assert [r["submission"] for r in toy[0]["rows"]] == ["toy--guesser"]  # its folder, its name
    assert toy[0]["rows"][0]["standard"] is True  # the whole task set, default options
    boards.pop(toy[0]["id"])
    assert set(boards) == {"booking-test-clemtodd", "booking-test-strict"}
    main_board = boards["booking-test-clemtodd"]
    names = [r["submission"] for r in main_board["rows"]]
    expected = {"rule", "first-row", "endpoint"} | ({"sandboxed"} if built["isolated"] else set())
    assert set(names) == expected
    assert names[-1] == "first-row"  # the control books nothing
    rows = {r["submission"]: r for r in main_board["rows"]}
    assert rows["rule"]["badge"] == "verified, built-in"
    assert rows["endpoint"]["badge"] == "verified, self-run"
    assert rows["rule"]["rank_interval"] and rows["rule"]["tier"] == "1"
    assert rows["first-row"]["tier"] == "2"  # told apart from the leader over 6 tasks
    if built["isolated"]:
        assert rows["sandboxed"]["badge"] == "verified, isolated"
        assert rows["sandboxed"]["channel"] == "isolated"
    assert [r["submission"] for r in boards["booking-test-strict"]["rows"]] == ["rule-strict"]
    excluded = {e["archive"]: e["reasons"] for e in index["excluded"]}
    assert set(excluded) == {"oracle.tar.gz", "edited.tar.gz", "notes.tar.gz"}
    assert any("privileged player" in r for r in excluded["oracle.tar.gz"])
    assert any("changed since the archive was prepared" in r for r in excluded["edited.tar.gz"])
    assert excluded["notes.tar.gz"] == ["not a submission archive (not a gzip file)"]
    site = built["site"]
    reports = sorted(p.name for p in (site / "submissions").glob("*.html"))
    shown = [*expected, "rule-strict", "toy--guesser"]
    assert reports == sorted(f"{n}.html" for n in shown)  # none of the refused


def test_the_badge_names_who_ran_the_agent() -> None:
    def verdict(channel: str | None) -> Verdict:
        return Verdict(
            status="verified", standard=True, benchmark="b", channel=channel,
            system=SystemDeclaration(description="d"), todeval_version="0",
        )  # fmt: skip

    seen = {c: badge(verdict(c))[0] for c in BADGES}
    assert seen == {
        "isolated": "verified, isolated",
        "endpoint": "verified, self-run",
        "in-process": "verified, trusted code",
        "built-in": "verified, built-in",
    }
    assert badge(verdict(None))[0] == "verified, channel not recorded"
    for bad in ("http://x.org/a.html", "/etc/passwd", "../up.html", "javascript:alert(1)", ""):
        with pytest.raises(ValueError):
            link(bad, "x")
    assert 'href="submissions/a.html#transcripts"' in link("submissions/a.html#transcripts", "t")


def test_a_site_is_replaced_only_by_a_site(built: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.tex").write_text("keep me", encoding="utf-8")
    assert _cli("leaderboard", "build", str(built["subs"]), "-o", str(other), "--quiet") == 2
    assert (other / "thesis.tex").read_text(encoding="utf-8") == "keep me"
    assert _cli("leaderboard", "build", str(tmp_path / "none"), "-o", str(tmp_path / "s")) == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _cli("leaderboard", "build", str(empty), "-o", str(tmp_path / "s")) == 3
    # a site this command wrote is rebuilt in place (one submission, transcripts capped)
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(built["subs"] / "rule-strict.tar.gz", one)
    site = tmp_path / "site"
    _ok("leaderboard", "build", str(one), "-o", str(site), "--quiet")
    (site / "stale.html").write_text("old", encoding="utf-8")
    _ok("leaderboard", "build", str(one), "-o", str(site), "--quiet", "--transcripts", "2")
    assert not (site / "stale.html").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_site_of_refused_archives_only_exits_4(
    built: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = tmp_path / "refused"
    subs.mkdir()
    for name in ("oracle.tar.gz", "notes.tar.gz"):
        shutil.copy(built["subs"] / name, subs / name)
    site = tmp_path / "site"
    capsys.readouterr()
    assert _cli("leaderboard", "build", str(subs), "-o", str(site), "--quiet") == 4
    out, err = capsys.readouterr()
    assert "0 verified submission(s), 2 excluded" in out
    assert err.count("\n") == 1, err  # one line: how many, and the first reason
    assert "all 2 archive(s) refused (first: notes.tar.gz: not a submission archive" in err
    # the site is written all the same: the excluded page with every reason, no board
    index = json.loads((site / "site.json").read_text(encoding="utf-8"))
    assert index["boards"] == []
    assert {e["archive"] for e in index["excluded"]} == {"oracle.tar.gz", "notes.tar.gz"}
    assert "privileged player" in (site / "excluded.html").read_text(encoding="utf-8")
    assert "No verified submission." in (site / "index.html").read_text(encoding="utf-8")
    # one verified archive beside them: a board, exit 0
    shutil.copy(built["subs"] / "rule-strict.tar.gz", subs)
    assert _cli("leaderboard", "build", str(subs), "-o", str(site), "--quiet") == 0


def _up(report: Path) -> str:
    """The href of a report page's link back to its board."""
    found = re.search(r'<a href="([^"]+)" id="up" rel="up">', report.read_text(encoding="utf-8"))
    assert found, report
    return found.group(1)


def test_each_report_links_back_to_its_board(built: dict[str, Any], tmp_path: Path) -> None:
    for bad in ("http://x.org/b.html", "//x.org/b.html", "/b.html", "javascript:alert(1)", ""):
        with pytest.raises(ValueError):
            relative_link(bad, "x")
    assert relative_link("../b.html#x", "b") == '<a href="../b.html#x">b</a>'
    site: Path = built["site"]
    for board in built["index"]["boards"]:
        for row in board["rows"]:
            assert _up(site / row["report"]) == f"../{board['page']}"
            assert (site / row["report"]).parent.joinpath(_up(site / row["report"])).is_file()
    # two boards of one benchmark, task set name and protocol (a --limit selection has a task
    # set hash of its own): their ids take the hash, and each report follows its own board
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(built["subs"] / "toy" / "guesser.tar.gz", subs / "all.tar.gz")
    _ok("run", "toy", "--limit", "5", "--out", str(tmp_path / "five"), "--quiet")
    _ok("submit", "prepare", str(tmp_path / "five"), "-o", str(subs / "five.tar.gz"),
        "--description", "five tasks")  # fmt: skip
    _ok("leaderboard", "build", str(subs), "-o", str(tmp_path / "site"), "--quiet")
    index = json.loads((tmp_path / "site" / "site.json").read_text(encoding="utf-8"))
    pages = {r["submission"]: b["page"] for b in index["boards"] for r in b["rows"]}
    assert len(set(pages.values())) == 2, pages
    assert all(p.removesuffix(".html")[-9:-8] == "-" for p in pages.values()), pages  # + hash
    for name, page in pages.items():
        report = tmp_path / "site" / "submissions" / f"{name}.html"
        assert _up(report) == f"../{page}"
        assert f'data-submission="{name}"' in (tmp_path / "site" / page).read_text("utf-8")


# --- headless Chromium ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from browser_session(tmp_path_factory)


def _raw_hrefs(driver: Any) -> list[str]:
    found = driver.execute_script(
        "return [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href'))"
    )
    return [str(h) for h in found]


def _errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_the_site_from_disk_in_chromium(built: dict[str, Any], driver: Any) -> None:
    site: Path = built["site"]
    driver.set_window_size(1400, 1000)
    driver.get((site / "index.html").as_uri())
    wait(driver, lambda d: css(d, "#boards tbody tr"))
    assert len(css(driver, "#boards tbody tr")) == 3
    assert "3 submission(s) kept off the boards" in css(driver, "#excluded-note")[0].text
    for href in _raw_hrefs(driver):  # relative links only: works from disk and any host
        assert "://" not in href and not href.startswith("/"), href
    screenshot(driver, "leaderboard-index.png")

    css(driver, "#boards tr[data-board=booking-test-clemtodd] a")[0].click()
    wait(driver, lambda d: css(d, "#board-booking-test-clemtodd"))
    rows = css(driver, "#board-booking-test-clemtodd tbody tr")
    order = [r.get_attribute("data-submission") for r in rows]
    assert order[-1] == "first-row" and "oracle" not in order and "edited" not in order
    text = {r.get_attribute("data-submission"): r.text for r in rows}
    assert "verified, built-in" in text["rule"] and "custom" in text["rule"]
    assert "6 × 1" in text["rule"] and "n = 6" in text["rule"]
    assert sideways_tables(driver) == [] and overflowing(driver) == []  # fits 1400 px
    assert HOSTILE in text["rule"]  # the description, as text
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    assert driver.execute_script("return document.scripts.length") == 0
    assert "verified, self-run" in text["endpoint"]
    if built["isolated"]:
        assert "verified, isolated" in text["sandboxed"]
    last = css(driver, "#board-booking-test-clemtodd tbody tr:last-child td.rank")[0].text
    assert last.startswith(str(len(order))) and "T2" in last
    heads = [h.text for h in css(driver, "#board-booking-test-clemtodd thead th")]
    assert any(h.startswith("Booking acc") and h.endswith("↑") for h in heads), heads
    assert "Cost / dialogue" in heads and "Time / dialogue" in heads
    verdict = css(driver, "#verdict-rule")[0]
    verdict.find_element("css selector", "summary").click()
    wait(driver, lambda d: verdict.get_attribute("open") is not None)
    assert "checked: replayed 6 episodes" in verdict.text  # the verdict as verify prints it
    assert "trust: built-in" in verdict.text
    notes = css(driver, "#board ul.notes")[0].text
    assert "Rank [95%]" in notes and "verified, trusted code" in notes
    assert not _errors(driver)
    screenshot(driver, "leaderboard-board.png")

    # the refused ones: on the excluded page, with their reasons
    css(driver, "nav.toc a")[1].click()
    wait(driver, lambda d: css(d, "#excluded tbody tr"))
    refused = {r.get_attribute("data-submission"): r.text for r in css(driver, "#excluded tr")[1:]}
    assert set(refused) == {"oracle", "edited", "notes"}
    assert "privileged player" in refused["oracle"]
    assert "changed since the archive was prepared" in refused["edited"]
    screenshot(driver, "leaderboard-excluded.png")

    # a transcripts link opens the submission's report; an episode opens in the viewer
    driver.back()
    wait(driver, lambda d: css(d, "#board-booking-test-clemtodd"))
    css(driver, "tr[data-submission=rule] a.transcripts")[0].click()
    wait(driver, lambda d: css(d, ".ep-row"))
    assert driver.current_url.endswith("submissions/rule.html#transcripts")
    first = css(driver, ".ep-row")[0]
    key = first.get_attribute("data-ep")
    assert key.startswith("rule/test/")
    first.click()
    wait(driver, lambda d: css(d, "#ep-detail h3") and css(d, "#ep-detail h3")[0].text)
    assert css(driver, "#ep-detail h3")[0].text == key.removeprefix("rule/")
    assert css(driver, "#ep-detail .msg[data-actor=user]")
    # the episode's own link, on a fresh load from disk
    # the report's link back to its board
    driver.get((site / "submissions" / "rule.html").as_uri())
    wait(driver, lambda d: css(d, "#up"))
    up = css(driver, "#up")[0]
    assert "the board: " in up.text and "protocol clemtodd" in up.text
    up.click()
    wait(driver, lambda d: css(d, "#board-booking-test-clemtodd tbody tr"))
    assert driver.current_url.endswith("/board-booking-test-clemtodd.html")
    driver.get("about:blank")
    driver.get((site / "submissions" / "rule.html").as_uri() + f"#ep={quote(key, safe='')}")
    wait(
        driver,
        lambda d: d.execute_script("return document.documentElement.dataset.episode") == key,
    )
    assert "ep-page" in driver.execute_script("return document.documentElement.className")
    assert not _errors(driver)
    screenshot(driver, "leaderboard-episode.png")


def test_the_site_from_a_static_host(built: dict[str, Any], driver: Any) -> None:
    """The same files served by a plain static server (Python's http.server, a real process on
    127.0.0.1): the board, and an episode's own link in a submission's report."""
    command = [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"]
    server = subprocess.Popen(
        command, cwd=built["site"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # Serving HTTP on 127.0.0.1 port N (http://...) ...
        match = re.search(r"port (\d+)", line)
        assert match, line
        root = f"http://127.0.0.1:{match.group(1)}/"
        driver.get(root)  # index.html
        wait(driver, lambda d: css(d, "#boards tbody tr"))
        css(driver, "#boards tr[data-board=booking-test-strict] a")[0].click()
        wait(driver, lambda d: css(d, "#board-booking-test-strict tbody tr"))
        css(driver, "tr[data-submission=rule-strict] a.transcripts")[0].click()
        wait(driver, lambda d: css(d, ".ep-row"))
        key = css(driver, ".ep-row")[0].get_attribute("data-ep")
        css(driver, "#up")[0].click()  # back to the board, and to the report again
        wait(driver, lambda d: css(d, "#board-booking-test-strict tbody tr"))
        assert driver.current_url == f"{root}board-booking-test-strict.html"
        driver.back()
        wait(driver, lambda d: css(d, ".ep-row"))
        driver.get("about:blank")
        driver.get(f"{root}submissions/rule-strict.html#ep={quote(key, safe='')}")
        wait(
            driver,
            lambda d: d.execute_script("return document.documentElement.dataset.episode") == key,
        )
        assert not _errors(driver)
    finally:
        server.terminate()
        server.wait(timeout=10)
