"""A canary API key appears in no file any command writes, nor in what it prints (issue 16,
finding 10), even when the model server echoes the request's ``Authorization`` header in every
error body and in every reply.

Two keys: ``OPENAI_API_KEY`` (``sk-...``) and one under a variable a models file names (no
recognisable shape: only its value says it is a key). Against the test server process with
``echo_authorization``: booking runs with an LLM system and an LLM user (500s on a share of the
calls, retried; an endpoint failing every call: exit 5 and its first cause; a 404: exit 2),
a bargaining run, a multiwoz-turns run, then ``report -o``, ``compare -o``, the ``view`` page
and index, and ``annotate export``. Every byte under the temporary directory and every line
printed is searched for the keys.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from todeval.backends.retry import SystemClock
from todeval.backends.spec import load_models_file
from todeval.cli import main
from todeval.core.redact import REDACTED, add_secret, redact
from todeval.testing.booking_model import booking_script
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

OPENAI_KEY = "sk-canary-" + secrets.token_hex(16)
MODEL_KEY = "canary-model-" + secrets.token_hex(16)
UNUSED_KEY = "canary-unused-" + secrets.token_hex(16)


@pytest.fixture(autouse=True)
def _keys_and_no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("CANARY_MODEL_KEY", MODEL_KEY)
    monkeypatch.setenv("CANARY_UNUSED_KEY", UNUSED_KEY)

    async def no_wait(self: SystemClock, seconds: float) -> None:
        return None

    monkeypatch.setattr(SystemClock, "sleep", no_wait)


def _server(**faults: object) -> ServerProcess:
    config = ServerConfig(
        script=booking_script(), echo_authorization=True, faults=FaultConfig.model_validate(faults)
    )
    return ServerProcess(config)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    made = {
        "flaky": _server(error_500=0.3),
        "failing": _server(error_500=1.0),
        "unknown-model": ServerProcess(
            ServerConfig(models=["known"], echo_authorization=True, script=booking_script())
        ),
    }
    try:
        yield {name: server.start().base_url for name, server in made.items()}
    finally:
        for server in made.values():
            server.close()


def _models_file(path: Path, url: str) -> Path:
    path.write_text(
        f'[models.m]\nspec = "openai:m@{url}"\napi_key_env = "CANARY_MODEL_KEY"\n\n'
        f'[models.o]\nspec = "openai:o@{url}"\napi_key_env = "OPENAI_API_KEY"\n\n'
        f'[models.unused]\nspec = "openai:u@{url}"\napi_key_env = "CANARY_UNUSED_KEY"\n'
    )
    return path


def _leaks(data: bytes) -> list[str]:
    return [key for key in (OPENAI_KEY, MODEL_KEY, UNUSED_KEY) if key.encode() in data]


def test_no_command_writes_or_prints_the_key(
    servers: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    runs = work / "runs"
    runs.mkdir(parents=True)
    printed: list[str] = []
    codes: dict[str, int] = {}

    def cli(name: str, *argv: str) -> None:
        codes[name] = main(list(argv))
        out, err = capsys.readouterr()
        printed.extend([out, err])

    def booking(name: str, url: str, *extra: str) -> None:
        models = _models_file(work / f"models-{name}.toml", url)
        cli(
            name,
            "run", "booking", "--system", "monolithic", "--system-model", "m", "--user", "llm",
            "--user-model", "o", "--models-file", str(models), "--limit", "3", "--limit-mode",
            "first", "--max-turns", "3", "--cache-path", str(work / "cache.sqlite"), "--quiet",
            "--out", str(runs / name), *extra,
        )  # fmt: skip

    booking("booking-a", servers["flaky"])
    booking("booking-b", servers["flaky"], "--seed", "1", "--no-cache")
    booking("booking-failing", servers["failing"], "--no-cache")
    booking("booking-404", servers["unknown-model"], "--no-cache")
    models = str(_models_file(work / "models-corpus.toml", servers["flaky"]))
    # (bargain takes spec strings only: its run sends no key, but writes what annotate reads)
    cli(
        "bargain",
        "run", "bargain", "--track", "craigslist", "--model", f"openai:m@{servers['flaky']}",
        "--limit", "2", "--cache-path", str(work / "cache.sqlite"), "--quiet", "--out",
        str(runs / "bargain"),
    )  # fmt: skip
    cli(
        "multiwoz-turns",
        "run", "multiwoz-turns", "--model", "o", "--models-file", models, "--limit", "2",
        "--no-cache", "--quiet", "--out", str(runs / "multiwoz-turns"),
    )  # fmt: skip
    a, b = str(runs / "booking-a"), str(runs / "booking-b")
    cli("report", "report", a, b, str(runs / "booking-failing"), "--transcripts", "all",
        "-o", str(work / "report.html"))  # fmt: skip
    cli("compare", "compare", a, b, "--resamples", "50", "-o", str(work / "compare.json"))
    cli("annotate", "annotate", "export", "--from", str(runs / "bargain"), "--n", "3", "-o",
        str(work / "items.jsonl"))  # fmt: skip

    from todeval.report import ViewState

    view = ViewState(root=runs, index_path=work / "view-index.sqlite")
    view.sync()
    page = view._page

    # the runs went as planned: the key reached the server, which echoed it back
    assert codes["booking-a"] in (0, 5) and codes["booking-b"] in (0, 5), codes
    assert codes["booking-failing"] == 5 and codes["booking-404"] == 2, codes
    for name in ("bargain", "multiwoz-turns", "report", "compare", "annotate"):
        assert codes[name] in (0, 5), (name, codes)
    terminal = "\n".join(printed)
    assert "server error 500" in terminal and "404" in terminal
    episodes = (runs / "booking-a" / "episodes.jsonl").read_text()
    assert f"Bearer {REDACTED}" in episodes  # an echoed reply, recorded without the key
    failing = (runs / "booking-failing" / "episodes.jsonl").read_text()
    assert f"Authorization: Bearer {REDACTED}" in failing  # an echoed error body, likewise

    assert not _leaks(terminal.encode()), terminal
    assert not _leaks(page)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 20
    leaking = {str(p.relative_to(tmp_path)): _leaks(p.read_bytes()) for p in written}
    assert {p: keys for p, keys in leaking.items() if keys} == {}


def test_every_configured_key_is_redacted(tmp_path: Path) -> None:
    """By value for the variables a models file names (used or not) and OPENAI_API_KEY; by
    shape for any Bearer token and sk- key; ordinary text is left alone."""
    load_models_file(_models_file(tmp_path / "models.toml", "http://127.0.0.1:9/v1"))
    text = f"a {MODEL_KEY} b {UNUSED_KEY} c {OPENAI_KEY} d"
    assert redact(text) == f"a {REDACTED} b {REDACTED} c {REDACTED} d"
    assert redact("Authorization: Bearer abc123xyz789") == f"Authorization: Bearer {REDACTED}"
    assert redact('{"key": "sk-proj-0a1b2c3d4e5f"}') == f'{{"key": "{REDACTED}"}}'
    for kept in ("the bearer of the card", "task-oriented sk-learn", "EMPTY", "x"):
        assert redact(kept) == kept
    # a key JSON must escape is found in serialised text too, and the line stays JSON
    add_secret('quoted"key\\with-é-123')
    line = json.dumps({"error": 'echo: quoted"key\\with-é-123.'})
    assert json.loads(redact(line)) == {"error": f"echo: {REDACTED}."}
