"""Credentials in a model URL reach no written byte and no printed line (issue 42): a canary in
the URL's query under credential names that no key shape gives away (``?api_key=``,
``?key=``, ``&sig=``), and a canary in the URL's userinfo, which is refused with a message
about credentials in URLs. Runs against the test model server process; every file under the
temporary directory (run directories, the response cache, report, compare) and everything
printed is searched."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from todeval.backends.retry import SystemClock
from todeval.cli import main
from todeval.core.redact import REDACTED, redact
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

QUERY_KEY = "canaryq" + secrets.token_hex(12)
PLAIN_KEY = "canaryp" + secrets.token_hex(12)
SIG = "canarys" + secrets.token_hex(12)
USER_PASS = "canaryu" + secrets.token_hex(12)
CANARIES = (QUERY_KEY, PLAIN_KEY, SIG, USER_PASS)


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_wait(self: SystemClock, seconds: float) -> None:
        return None

    monkeypatch.setattr(SystemClock, "sleep", no_wait)


def _leaks(data: bytes) -> list[str]:
    return [c for c in CANARIES if c.encode() in data]


def test_no_url_credential_is_written_or_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ServerProcess(ServerConfig(script=booking_script()))
    url = server.start().base_url
    work = tmp_path / "work"
    runs = work / "runs"
    printed: list[str] = []
    codes: dict[str, int] = {}

    def cli(name: str, *argv: str) -> None:
        codes[name] = main(list(argv))
        out, err = capsys.readouterr()
        printed.extend([out, err])

    try:
        spec = f"openai:m@{url}?api_key={QUERY_KEY}&sig={SIG}"
        cli("booking", "run", "booking", "--system", "monolithic", "--system-model", spec,
            "--limit", "2", "--limit-mode", "first", "--max-turns", "3", "--cache-path",
            str(work / "cache.sqlite"), "--quiet", "--out", str(runs / "booking"))  # fmt: skip
        cli("bargain", "run", "bargain", "--track", "craigslist", "--model",
            f"openai:m@{url}?key={PLAIN_KEY}", "--limit", "2", "--cache-path",
            str(work / "cache.sqlite"), "--quiet", "--out", str(runs / "bargain"))  # fmt: skip
        userinfo = url.replace("http://", f"http://user:{USER_PASS}@")
        cli("userinfo", "run", "booking", "--system", "monolithic", "--system-model",
            f"openai:m@{userinfo}", "--limit", "1", "--quiet", "--out",
            str(runs / "userinfo"))  # fmt: skip
        cli("report", "report", str(runs / "booking"), str(runs / "bargain"), "--transcripts",
            "all", "-o", str(work / "report.html"))  # fmt: skip
    finally:
        server.close()
    terminal = "\n".join(printed)
    assert codes["userinfo"] == 2, terminal
    assert "credentials in URLs" in terminal
    assert codes["booking"] in (0, 2, 5) and codes["bargain"] in (0, 2, 5), (codes, terminal)
    assert (runs / "booking" / "manifest.json").exists()
    manifest = (runs / "booking" / "manifest.json").read_text()
    assert f"api_key={REDACTED}" in manifest  # the spec is recorded, its credential is not
    assert not _leaks(terminal.encode()), terminal
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 5
    leaking = {str(p.relative_to(tmp_path)): _leaks(p.read_bytes()) for p in written}
    assert {p: keys for p, keys in leaking.items() if keys} == {}


def test_url_credentials_are_redacted_by_name_not_by_shape() -> None:
    assert redact("http://h/v1?api_key=abc&x=1") == f"http://h/v1?api_key={REDACTED}&x=1"
    assert redact("https://h?subscription-key=q1#f") == f"https://h?subscription-key={REDACTED}#f"
    assert redact('"https://u:pw@h/v1"') == f'"https://{REDACTED}@h/v1"'
    assert redact("a &amp;token=xyz&amp;b=1") == f"a &amp;token={REDACTED}&amp;b=1"
    for kept in ("x = 1, y=2", "?monkey=banana", "openai:m@http://127.0.0.1:8/v1", "a@b.c"):
        assert redact(kept) == kept
