"""``todeval view``: routes, live version hash, loopback guard, clean Ctrl-C (the episode
index and the /api routes: test_view_index.py)."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.report.helpers import ROOT
from todeval.cli import main
from todeval.report import ViewState, make_server
from todeval.report._index import EpisodeQuery


def _get(port: int, path: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": host} if host else {}
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body


@pytest.fixture
def served(tmp_path: Path, runs: dict[str, Path]) -> Iterator[tuple[Path, int]]:
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(runs["rule"], root / "first")
    server = make_server(ViewState(root), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield root, int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_page_version_and_live_update(served: tuple[Path, int], runs: dict[str, Path]) -> None:
    root, port = served
    status, headers, body = _get(port, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "script-src 'sha256-" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    page = body.decode()
    assert 'data-run="first"' in page and '"live":true' in page
    assert '"mode":"api"' in page and '"episodes":[]' in page  # transcripts come on demand
    _, _, v1 = _get(port, "/version.json")
    version = json.loads(v1)["version"]
    assert f'"version":"{version}"' in page
    shutil.copytree(runs["corpus"], root / "second")
    _, _, v2 = _get(port, "/version.json")
    assert json.loads(v2)["version"] != version
    _, _, body = _get(port, "/")
    assert 'data-run="second"' in body.decode()


def test_only_known_routes_and_loopback_hosts(served: tuple[Path, int]) -> None:
    _, port = served
    assert _get(port, "/manifest.json")[0] == 404
    assert _get(port, "/../../etc/passwd")[0] == 404
    assert _get(port, "/first/episodes.jsonl")[0] == 404
    assert _get(port, "/api/../first/manifest.json")[0] == 404
    assert _get(port, "/", host="evil.example")[0] == 421
    assert _get(port, "/api/facets", host="evil.example")[0] == 421
    assert (
        _get(port, "/api/episode?run=first&id=test/000-sng01936%230", host="evil.example")[0] == 421
    )
    assert _get(port, "/", host=f"evil.example:{port}")[0] == 421
    assert _get(port, "/", host=f"localhost:{port}")[0] == 200
    assert _get(port, "/version.json", host=f"[::1]:{port}")[0] == 200


def test_problem_runs_are_listed_not_fatal(served: tuple[Path, int]) -> None:
    root, port = served
    (root / "broken").mkdir()
    (root / "broken" / "manifest.json").write_text("{", encoding="utf-8")
    status, _, body = _get(port, "/")
    assert status == 200
    page = body.decode()
    assert "not a valid manifest" in page and 'data-run="first"' in page


def test_empty_directory_says_so(tmp_path: Path) -> None:
    server = make_server(ViewState(tmp_path), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        status, _, body = _get(int(server.server_address[1]), "/")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert status == 200 and "no run directories under" in body.decode()


def start_view(root: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``todeval view ROOT --port 0`` as a real process; returns it and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "todeval.cli", "view", str(root), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "serving" in line, (line, proc.stderr.read() if proc.stderr else "")
    url = line.split(" at ", 1)[1].split(" ", 1)[0]
    return proc, url


def test_view_process_serves_and_stops_on_ctrl_c(tmp_path: Path, runs: dict[str, Path]) -> None:
    shutil.copytree(runs["rule"], tmp_path / "only")
    proc, url = start_view(tmp_path)
    try:
        assert url.startswith("http://127.0.0.1:")
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        status, _, body = _get(port, "/")
        assert status == 200 and 'data-run="only"' in body.decode()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_view_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "missing")]) == 3
    assert "not a directory" in capsys.readouterr().err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["view", str(tmp_path), "--port", str(port)]) == 2
    assert "cannot listen" in capsys.readouterr().err


def test_a_restart_over_a_kept_page_prepares_the_first_transcript(
    tmp_path: Path, runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart over unchanged runs serves the kept page without reading the runs, so nothing
    has loaded the profiles and explainers a transcript needs: ``prepare_transcripts`` (run by
    ``todeval view`` in the background once it listens) loads them, and the first transcript
    then discovers nothing."""
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(runs["rule"], root / "first")
    ViewState(root).sync()  # the index is built and the complete page kept
    restarted = ViewState(root)
    restarted.sync()
    assert restarted.complete and restarted.profiles is None  # the kept page: nothing read
    restarted.prepare_transcripts()
    assert restarted.profiles is not None and "booking" in restarted._explainers

    def no_discovery() -> None:
        raise AssertionError("the first transcript discovered the plug-ins")

    monkeypatch.setattr("todeval.report._server.discover", no_discovery)
    rows = restarted.index.query(EpisodeQuery(limit=1))["rows"]
    body = restarted.episode(rows[0]["run"], rows[0]["id"])
    assert body is not None and json.loads(body)["id"] == rows[0]["id"]
