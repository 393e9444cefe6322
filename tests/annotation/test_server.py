"""The annotation server over HTTP (loopback): headers, checks, answers appended at once."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.annotation.conftest import Served
from todeval.annotation.items import merge_answers, read_items
from todeval.cli import main
from todeval.report._page import script_hash


def _request(
    url: str, data: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    body = (
        None if data is None else (data if isinstance(data, bytes) else json.dumps(data).encode())
    )
    h = {"Content-Type": "application/json"} if data is not None else {}
    h.update(headers or {})
    req = urllib.request.Request(url, data=body, headers=h, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_page_headers_and_no_gold(served: Served) -> None:
    code, headers, body = _request(served.url)
    assert code == 200
    from todeval.annotation.server import asset

    csp = headers["Content-Security-Policy"]
    assert f"'{script_hash(asset('annotate.js'))}'" in csp and "default-src 'none'" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    page = body.decode()
    assert '"gold"' not in page and "<script>window" not in page
    assert page.count("<script") == 2  # the inert data block and the hashed script
    code, _, _ = _request(served.url, headers={"Host": "evil.example:80"})
    assert code == 421
    assert _request(served.url + "etc/passwd")[0] == 404


def test_answers_are_checked_and_appended(served: Served) -> None:
    items = read_items(served.state.items_path)
    first = items[0]
    api = served.url + "api/answer"
    c0 = first.candidates[0].id
    assert _request(api, {"item": first.id, "choice": [c0]})[0] == 200
    assert _request(api, {"item": first.id, "choice": ["nope"]})[0] == 400
    assert _request(api, {"item": "missing", "choice": [c0]})[0] == 400
    assert _request(api, {"item": first.id, "choice": []})[0] == 400
    assert _request(api, b"not json")[0] == 400
    wrong = {"Content-Type": "text/plain"}
    assert _request(api, {"item": first.id, "choice": [c0]}, wrong)[0] == 415
    cross = {"Origin": "http://evil.example"}
    assert _request(api, {"item": first.id, "choice": [c0]}, cross)[0] == 403
    # flushed before the reply: the file already holds it
    path = served.state.log.path
    assert merge_answers([path]) == {first.id: {"alice": frozenset({c0})}}
    _, _, body = _request(served.url + "api/answers")
    assert json.loads(body) == {"answers": {first.id: [c0]}}


def test_serve_usage_errors(tmp_path: Any) -> None:
    assert main(["annotate", "serve", str(tmp_path / "x.csv"), "--annotator", "a"]) == 2
    assert main(["annotate", "serve", str(tmp_path / "x.jsonl"), "--annotator", "a b"]) == 2
    with pytest.raises(SystemExit):
        main(["annotate", "serve", "x.jsonl"])
