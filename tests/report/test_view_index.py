"""``todeval view`` at scale: the SQLite episode index and the /api routes served from it.

The index is built incrementally (only lines appended since the last update are read; a
rewritten file is indexed again), and the page embeds no episodes: the list, its filters,
counts and the search come from /api/episodes, a transcript from /api/episode.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.report.helpers import PAYLOADS
from tests.report.test_view_server import start_view
from todeval.cli import main
from todeval.report import ViewState, make_server
from todeval.report._index import (
    INDEX_NAME,
    EpisodeIndex,
    EpisodeQuery,
    IndexedRun,
    facet_word,
    search_terms,
)


def _get(port: int, path: str, **params: Any) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path + ("?" + urlencode(params) if params else ""))
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    headers = {k.lower(): v for k, v in resp.getheaders()}
    data = (
        json.loads(body) if headers.get("content-type", "").startswith("application/json") else body
    )
    return resp.status, headers, data


@pytest.fixture
def root(tmp_path: Path, runs: dict[str, Path], xss: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(runs["corpus"], root / "corpus")
    shutil.copytree(runs["unrealistic"], root / "unreal")
    shutil.copytree(xss, root / "xss")
    return root


@pytest.fixture
def port(root: Path) -> Iterator[int]:
    server = make_server(ViewState(root), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_page_embeds_no_episodes_and_the_api_lists_them(root: Path, port: int) -> None:
    status, headers, page = _get(port, "/")
    assert status == 200
    text = page.decode()
    assert '"mode":"api"' in text and '"episodes":[]' in text
    assert "154 episodes, listed from the index (.todeval-view.sqlite)" in text
    assert (root / INDEX_NAME).exists()

    status, headers, facets = _get(port, "/api/facets")
    assert status == 200 and headers["x-content-type-options"] == "nosniff"
    assert "script-src 'sha256-" in headers["content-security-policy"]
    assert facets["total"] == 117 + 30 + len(PAYLOADS)
    assert facets["run"]["corpus"] == 117
    assert facets["fc"]["wrong_booking"] == 6 and facets["fc"]["no_booking"] == 6
    assert facets["group"]["hotel"] > 0

    _, _, page1 = _get(port, "/api/episodes", run="corpus", limit=50)
    assert page1["total"] == 117 and len(page1["rows"]) == 50
    row = page1["rows"][0]
    assert set(row) == {"run", "id", "outcome", "group", "labels", "turns"}
    assert row == {  # failures first: the run's first failure, then the others, then successes
        "run": "corpus",
        "id": "test/007-sng01353#0",
        "outcome": "failure",
        "group": "hotel",
        "labels": row["labels"],
        "turns": row["turns"],
    }
    assert row["labels"]["failure_class"] == "wrong_booking"
    assert [r["outcome"] for r in page1["rows"][12:]] == ["success"] * 38
    _, _, page3 = _get(port, "/api/episodes", run="corpus", limit=50, offset=100)
    assert len(page3["rows"]) == 17 and page3["offset"] == 100
    _, _, fails = _get(port, "/api/episodes", run="corpus", outcome="failure")
    assert fails["total"] == 12 and all(r["outcome"] == "failure" for r in fails["rows"])
    _, _, wrong = _get(port, "/api/episodes", fc="wrong_booking")
    assert wrong["total"] == 6
    _, _, label = _get(port, "/api/episodes", label="failure_class:no_booking")
    assert label["total"] == 6
    assert all(r["labels"]["failure_class"] == "no_booking" for r in label["rows"])
    _, _, group = _get(port, "/api/episodes", group="hotel", run="corpus")
    assert group["total"] == 20 and all(r["group"] == "hotel" for r in group["rows"])


def test_one_episode_on_demand(port: int) -> None:
    status, _, ep = _get(port, "/api/episode", run="corpus", id="test/000-sng01936#0")
    assert status == 200
    assert ep["id"] == "test/000-sng01936#0" and ep["run"] == "corpus"
    kinds = [e["kind"] for e in ep["events"]]
    assert "db_query" in kinds and "booking_result" in kinds and ep["details"]["goal"]
    assert isinstance(ep["seed"], str)
    # how the score was computed (booking's explainer) and the review, with the episode
    assert ep["explanation"]["metric"] == "booking.booking_accuracy"
    assert ep["explanation"]["summary"].startswith(
        "Booking accuracy 1 (every goal slot must match): all "
    )
    assert ep["review"]["verdict"] == "none"
    _, _, failed = _get(port, "/api/episode", run="corpus", id="test/007-sng01353#0")
    hotel = failed["explanation"]["groups"][0]
    assert hotel["title"] == "hotel" and hotel["passed"] is False
    # each check as [name, passed, expected, actual]
    assert ["info.parking", False, "yes", "no"] in hotel["checks"]
    assert any(c[1] for c in hotel["checks"])
    status, _, around = _get(
        port, "/api/neighbours", at_run="corpus", at_id="test/007-sng01353#0", run="corpus"
    )
    assert status == 200 and around == {"prev": None, "next": "corpus/test/011-sng01262#0"}
    assert _get(port, "/api/neighbours", at_run="corpus")[0] == 400
    assert _get(port, "/api/neighbours", at_run="corpus", at_id="x", limit="0")[0] == 400
    status, _, err = _get(port, "/api/episode", run="corpus", id="nope#0")
    assert status == 404 and "nope#0" in err["error"]
    assert _get(port, "/api/episode", run="corpus")[0] == 400
    status, _, err = _get(port, "/api/episodes", limit="many")
    assert status == 400 and err["error"].startswith("limit:")
    assert _get(port, "/api/episodes", sneaky="1")[0] == 400
    assert _get(port, "/api/nothing")[0] == 404
    # the payloads come back as JSON text, never as markup
    _, _, xss = _get(port, "/api/episode", run="xss", id=f"test/001-{PAYLOADS[1]}#0")
    assert xss["reason"] == PAYLOADS[1]


def test_search_through_the_api(port: int) -> None:
    _, _, hits = _get(port, "/api/episodes", q="volcano")
    assert hits["total"] > 0 and {r["run"] for r in hits["rows"]} == {"unreal"}
    assert hits["terms"] == ["volcano"]
    _, _, few = _get(port, "/api/episodes", q="volc", run="unreal")
    assert few["total"] == hits["total"]  # words match by prefix
    _, _, both = _get(port, "/api/episodes", q="<img src=x")
    assert both["total"] == 2 and {r["run"] for r in both["rows"]} == {"xss"}
    _, _, ref = _get(port, "/api/episodes", q="guesthouse north", run="corpus")
    _, _, one = _get(port, "/api/episodes", q="guesthouse", run="corpus")
    assert 0 < ref["total"] <= one["total"] < 117
    _, _, none = _get(port, "/api/episodes", q="zzyzx-nowhere")
    assert none["total"] == 0 and none["rows"] == []


def test_the_index_is_updated_when_runs_change(root: Path, port: int) -> None:
    assert _get(port, "/api/facets")[2]["total"] == 154
    shutil.rmtree(root / "unreal")
    _, _, facets = _get(port, "/api/facets")
    assert facets["total"] == 124 and "unreal" not in facets["run"]
    _append_copies(root / "corpus", 3)
    _, _, facets = _get(port, "/api/facets")
    assert facets["run"]["corpus"] == 120


def _lines(run: Path) -> list[str]:
    return (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def _copy_line(line: str, n: int) -> str:
    record = json.loads(line)
    record["task_id"] = f"copy/{n:03d}"
    record["episode_id"] = f"copy/{n:03d}#0"
    record["events"].append(
        {"t": 9.0, "kind": "user_message", "actor": "user", "turn": 9, "data": {"text": f"q{n}"}}
    )
    return json.dumps(record) + "\n"


def _append_copies(run: Path, n: int, start: int = 0) -> int:
    lines = _lines(run)
    text = "".join(_copy_line(lines[i], start + i) for i in range(n))
    with (run / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(text)
    return len(text.encode())


def _index(root: Path, fts: bool | None = None) -> tuple[EpisodeIndex, list[IndexedRun]]:
    index = EpisodeIndex(root / "idx.sqlite", root, fts=fts)
    runs = [
        IndexedRun(
            key="corpus", path=root / "corpus", benchmark="booking", failure_label="failure_class"
        ),
        IndexedRun(
            key="unreal", path=root / "unreal", benchmark="booking", failure_label="failure_class"
        ),
    ]
    return index, runs


def _failures_first(rows: list[dict[str, Any]]) -> bool:
    failed = [r["outcome"] != "success" for r in rows]
    return failed == sorted(failed, reverse=True)


@pytest.mark.parametrize("walk", [False, True])
def test_lists_put_failures_first_across_runs_and_page_through_them(
    root: Path, monkeypatch: pytest.MonkeyPatch, walk: bool
) -> None:
    """Every failure of every run before the first success, in the runs' order and each
    run's file order, whichever way a page is read (run by run, a search sorted, or a search
    walked run by run: ``walk``); pages cut anywhere give the same list."""
    import todeval.report._index as index_module

    if walk:
        monkeypatch.setattr(index_module, "_FEW_MATCHES", 0)
    index, runs = _index(root)
    index.update(runs)
    for query in ({}, {"q": "hotel"}, {"label": "failure_class:no_booking"}, {"group": "hotel"}):
        whole = index.query(EpisodeQuery(limit=2000, **query))
        rows = whole["rows"]
        assert len(rows) == whole["total"] > 0 and _failures_first(rows), query
        failures = [r for r in rows if r["outcome"] != "success"]
        assert [r["run"] for r in failures] == sorted(
            (r["run"] for r in failures), key=["corpus", "unreal"].index
        )
        paged: list[dict[str, Any]] = []
        while len(paged) < whole["total"]:
            paged += index.query(EpisodeQuery(limit=7, offset=len(paged), **query))["rows"]
        assert paged == rows, query
        # as the page appends: each page continues after the previous one's `next`
        cursor: str | None = ""
        by_cursor: list[dict[str, Any]] = []
        while len(by_cursor) < whole["total"]:
            page = index.query(
                EpisodeQuery(limit=7, offset=len(by_cursor), after=cursor or "", **query)
            )
            assert page["rows"], query
            by_cursor += page["rows"]
            cursor = page["next"]
            if "q" not in query and "label" not in query:
                assert cursor is None  # pages by the runs' counts need none
        assert by_cursor == rows, query
    everything = index.query(EpisodeQuery(limit=2000))["rows"]
    assert {r["run"] for r in everything[:5]} == {"corpus"} and everything[-1][
        "outcome"
    ] == "success"


def test_neighbours_are_the_failures_around_an_episode(root: Path) -> None:
    index, runs = _index(root)
    index.update(runs)
    rows = index.query(EpisodeQuery(limit=2000))["rows"]
    keys = [f"{r['run']}/{r['id']}" for r in rows if r["outcome"] != "success"]
    assert len(keys) > 3

    def around(key: str, **filters: str) -> dict[str, str | None]:
        run, _, episode = key.partition("/")
        return index.neighbours(EpisodeQuery(**filters), run, episode)

    assert around(keys[0]) == {"prev": None, "next": keys[1]}
    assert around(keys[1]) == {"prev": keys[0], "next": keys[2]}
    assert around(keys[-1]) == {"prev": keys[-2], "next": None}
    # across runs: an episode of the second run comes after the first run's last failure
    unreal = next(r for r in rows if r["run"] == "unreal")
    assert around(f"unreal/{unreal['id']}")["prev"] == keys[-1]
    assert around(keys[-1], run="corpus")["next"] is None
    assert around(f"unreal/{unreal['id']}", run="unreal")["prev"] is None  # the filter holds
    # a success: the failures before and after it in its run's file order
    success = next(r for r in rows if r["run"] == "corpus" and r["outcome"] == "success")
    assert success["id"] == "test/000-sng01936#0"
    assert around(f"corpus/{success['id']}") == {"prev": None, "next": keys[0]}
    assert around("corpus/nope#0") == {"prev": None, "next": None}


def test_incremental_update_reads_only_new_lines(root: Path) -> None:
    index, runs = _index(root)
    first = index.update(runs)
    assert first.lines == 147 and first.runs == 2 and not first.reindexed
    again = index.update(runs)
    assert again.lines == 0 and again.bytes == 0 and again.runs == 0
    added = _append_copies(root / "corpus", 4)
    step = index.update(runs)
    assert step.lines == 4 and step.bytes == added and step.runs == 1 and not step.reindexed
    assert index.counts()["corpus"] == 121
    q = index.query(EpisodeQuery(q="q2", run="corpus"))
    assert [r["id"] for r in q["rows"]] == ["copy/002#0"]
    # a torn last line (a run killed mid-write) waits until it is complete
    torn = _copy_line(_lines(root / "corpus")[10], 10)
    with (root / "corpus" / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(torn[:50])
    assert index.update(runs).lines == 0 and index.counts()["corpus"] == 121
    with (root / "corpus" / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(torn[50:])
    assert index.update(runs).lines == 1 and index.counts()["corpus"] == 122
    # an episode written again (re-run after an infrastructure error) replaces its row
    with (root / "corpus" / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(_lines(root / "unreal")[0].replace('"unrealistic/', '"copy-again/'))
        fh.write(_copy_line(_lines(root / "corpus")[0], 0).replace('"q0"', '"replaced"'))
    index.update(runs)
    assert index.counts()["corpus"] == 123
    assert index.query(EpisodeQuery(q="replaced"))["total"] == 1
    assert index.query(EpisodeQuery(q="q0", run="corpus"))["total"] == 0
    record = index.record("corpus", "copy/000#0")
    assert record is not None and record.events[-1].data == {"text": "replaced"}


def test_a_rewritten_file_is_indexed_again(root: Path) -> None:
    index, runs = _index(root)
    index.update(runs)
    path = root / "unreal" / "episodes.jsonl"
    lines = _lines(root / "unreal")
    # shrunk: fewer lines than were indexed
    path.write_text("".join(lines[:10]), encoding="utf-8")
    step = index.update(runs)
    assert step.reindexed == ["unreal"] and step.lines == 10 and index.counts()["unreal"] == 10
    # same size, other content (rewritten in place): the digest before the offset differs
    swapped = lines[:10]
    swapped[8], swapped[9] = swapped[9], swapped[8]
    assert swapped != lines[:10]
    with path.open("r+", encoding="utf-8") as fh:
        fh.write("".join(swapped))
    step = index.update(runs)
    assert step.reindexed == ["unreal"] and index.counts()["unreal"] == 10
    # replaced by a new file (another inode) that is longer
    tmp = path.with_name("new.jsonl")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(path)
    step = index.update(runs)
    assert step.reindexed == ["unreal"] and index.counts()["unreal"] == 30
    # a corrupt complete line is skipped and reported, not fatal
    with path.open("a", encoding="utf-8") as fh:
        fh.write("{not json}\n")
    index.update(runs)
    assert index.counts()["unreal"] == 30
    assert any("line 31 is not a valid episode record" in p for p in index.problems())


def test_like_search_without_fts5(root: Path) -> None:
    index, runs = _index(root, fts=False)
    index.update(runs)
    assert not index.fts
    hits = index.query(EpisodeQuery(q="Volcano"))
    assert hits["total"] > 0 and hits["terms"] == ["Volcano"]
    assert index.query(EpisodeQuery(q="100%"))["total"] == 0  # % is literal, not a wildcard
    # the hidden words of the FTS5 index are not in the text a LIKE search reads
    hidden = facet_word("o", "success")[1:]
    assert index.query(EpisodeQuery(q=hidden))["total"] == 0
    # the same file opened with FTS5 wanted is rebuilt with it
    again = EpisodeIndex(root / "idx.sqlite", root, fts=True)
    assert again.fts and again.counts() == {}


def test_view_process_uses_the_given_index_file(root: Path, tmp_path: Path) -> None:
    index = tmp_path / "elsewhere" / "view.sqlite"
    index.parent.mkdir()
    proc, url = start_view(root, "--index", str(index))
    try:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        assert _get(port, "/api/facets")[2]["total"] == 154
        assert index.exists() and not (root / INDEX_NAME).exists()
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err
    assert f"index {index} (154 new line(s)" in err


def test_a_transcript_is_read_by_offset_while_the_log_grows_or_tears(root: Path) -> None:
    index, runs = _index(root)
    index.update(runs)
    first = index.record("corpus", "test/000-sng01936#0")
    assert first is not None and first.task_id == "test/000-sng01936"
    log = root / "corpus" / "episodes.jsonl"
    # appended lines (indexed or not yet) and a torn last line leave indexed offsets valid
    _append_copies(root / "corpus", 2)
    torn = _copy_line(_lines(root / "corpus")[5], 5)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(torn[: len(torn) // 2])
    assert index.record("corpus", "test/000-sng01936#0") == first
    index.update(runs)  # the torn line waits; the two complete ones are read
    assert index.counts()["corpus"] == 119
    copy = index.record("corpus", "copy/001#0")
    assert copy is not None and copy.events[-1].data == {"text": "q1"}
    assert index.record("corpus", "copy/005#0") is None
    with log.open("a", encoding="utf-8") as fh:
        fh.write(torn[len(torn) // 2 :])
    index.update(runs)
    assert index.record("corpus", "copy/005#0") is not None
    assert index.record("corpus", "test/000-sng01936#0") == first
    # the file rewritten under the index (two lines swapped): the stale offset reads nothing
    # wrong -- None, until the index is updated (it sees the rewrite and reads it again)
    lines = _lines(root / "corpus")
    assert len(lines[0]) != len(lines[1])
    log.write_text("".join([lines[1], lines[0], *lines[2:]]), encoding="utf-8")
    assert index.record("corpus", "test/000-sng01936#0") is None
    assert index.update(runs).reindexed == ["corpus"]
    assert index.record("corpus", "test/000-sng01936#0") == first


def test_the_index_keeps_no_copy_of_the_transcripts(root: Path) -> None:
    index, runs = _index(root)
    index.update(runs)
    import sqlite3

    with sqlite3.connect(index.path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        columns = {
            name: [c[1] for c in db.execute(f'PRAGMA table_info("{name}")')] for name in tables
        }
    assert index.fts and "search_content" not in tables  # contentless: postings only
    assert not any(
        "events" in cols or "text" in cols for n, cols in columns.items() if n != "search"
    )
    # a run dropped and indexed again leaves postings that match nothing
    index.update(runs[:1])
    assert index.query(EpisodeQuery(q="volcano"))["total"] == 0
    index.update(runs)
    assert index.query(EpisodeQuery(q="volcano"))["total"] > 0
    assert index.facets()["total"] == 147


def _rank_cells(html: str) -> list[str]:
    return re.findall(r'<td class="rank"[^>]*>.*?</td>', html)


def test_the_live_boards_show_the_reports_rank_intervals(
    tmp_path: Path, runs: dict[str, Path]
) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    for name in ("rule", "corpus"):
        shutil.copytree(runs[name], root / name)
    static = tmp_path / "report.html"
    assert main(["report", str(root / "rule"), str(root / "corpus"), "-o", str(static)]) == 0
    expected = _rank_cells(static.read_text(encoding="utf-8"))
    assert len(expected) == 2 and all('class="rk"' in cell for cell in expected)
    server = make_server(ViewState(root), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        status, _, page = _get(int(server.server_address[1]), "/")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert status == 200
    assert _rank_cells(page.decode()) == expected
    # a restart over unchanged runs serves the kept page, intervals and all
    again = ViewState(root)
    assert again.page() == page and again.complete


def test_pages_across_runs_agree_with_the_whole_list(root: Path) -> None:
    index, runs = _index(root)
    index.update(runs)
    every = index.query(EpisodeQuery(limit=2000))["rows"]
    assert len(every) == 147 and [r["run"] for r in every][116:118] == ["corpus", "unreal"]
    for filters in ({}, {"outcome": "failure"}, {"fc": "wrong_booking"}, {"group": "hotel"}):
        want = [
            r
            for r in every
            if all(
                (r["outcome"] if k == "outcome" else r["group"]) == v
                if k != "fc"
                else r["labels"].get("failure_class") == v
                for k, v in filters.items()
            )
        ]
        for offset, limit in ((0, 5), (110, 20), (len(want) - 3, 10)):
            got = index.query(EpisodeQuery(offset=max(0, offset), limit=limit, **filters))
            assert got["total"] == len(want)
            assert got["rows"] == want[max(0, offset) : max(0, offset) + limit], (filters, offset)
    # a search or a label filter: the same order, counted in SQL
    hits = index.query(EpisodeQuery(q="hotel", limit=2000))["rows"]
    assert hits == [r for r in every if r in hits] and len(hits) > 1
    labels = index.query(EpisodeQuery(label="failure_class:no_booking", offset=2, limit=3))
    assert (
        labels["total"] == 6
        and [r["labels"]["failure_class"] for r in labels["rows"]] == ["no_booking"] * 3
    )


def test_a_search_with_filters_is_counted_and_paged_as_each_filter_says(root: Path) -> None:
    """A search with other filters matches their hidden words in the search table (one FTS
    query, counted from the postings): the same rows as each filter and the search apart."""
    index, runs = _index(root)
    index.update(runs)
    every = index.query(EpisodeQuery(limit=2000))["rows"]
    hits = index.query(EpisodeQuery(q="hotel", limit=2000))["rows"]
    assert 0 < len(hits) < len(every)
    fail_label = "failure_class"
    for filters in (
        {"outcome": "failure"},
        {"outcome": "success"},
        {"run": "unreal"},
        {"run": "nowhere"},
        {"fc": "wrong_booking"},
        {"group": "hotel"},
        {"label": f"{fail_label}:no_booking"},
        {"run": "corpus", "outcome": "failure", "group": "hotel"},
    ):

        def keep(row: dict[str, Any], filters: dict[str, str] = filters) -> bool:
            got = {
                "outcome": row["outcome"],
                "run": row["run"],
                "fc": row["labels"].get(fail_label, ""),
                "group": row["group"],
                "label": f"{fail_label}:{row['labels'].get(fail_label, '')}",
            }
            return all(got[k] == v for k, v in filters.items())

        want = [r for r in hits if keep(r)]
        for offset, limit in ((0, 2000), (0, 3), (max(0, len(want) - 2), 5)):
            got = index.query(EpisodeQuery(q="hotel", offset=offset, limit=limit, **filters))
            assert got["total"] == len(want), filters
            assert got["rows"] == want[offset : offset + limit], (filters, offset)
        # pages of 2 by cursor: the same rows
        rows: list[dict[str, Any]] = []
        cursor = ""
        while len(rows) < len(want):
            page = index.query(
                EpisodeQuery(q="hotel", offset=len(rows), limit=2, after=cursor, **filters)
            )
            rows += page["rows"]
            cursor = page["next"]
        assert rows == want, filters
    # the hidden words match no search typed: their letters without the private-use mark
    # are another word (the mark itself is no word to a search)
    hidden = facet_word("o", "success")
    for typed in (hidden, hidden[1:]):
        assert index.query(EpisodeQuery(q=typed, limit=1))["total"] == 0, typed
    assert not search_terms(hidden[0])
