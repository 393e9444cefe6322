"""Every command that writes, run with canaries (issue 42.4): no credential reaches a written
byte or a printed line.

The commands come from the parser itself (:func:`todeval.testing.cli_fuzz.writing_commands`):
a command that writes (``-o``, ``--out``, ``--csv``, ``--report``, ...) and takes a model, a
models file or an endpoint URL must have an entry in :func:`_invocations`, every other writing
command one in :func:`_others` (run over what the first wrote, with the canaries in the
environment), so a new one cannot escape. The run paths no command names are played too: a
``package.module:Class`` player on a model under ``--isolate`` (bubblewrap) and a run with
``--executor ray`` on a local cluster whose nodes hold the canaries (Ray's own files searched).
Each entry runs in this process (``serve tools`` over stdio, and the Ray run's driver, in a
subprocess) against the test model server process, which echoes the request's ``Authorization``
header in every reply and error body (but replies read as strict JSON, sent as they are), with
three kinds of canary:

* a key under a variable a models file names (``api_key_env``: sent, and echoed back) and one
  in ``OPENAI_API_KEY`` (in the environment; a spec with a URL sends no key), neither shaped
  like a key;
* credentials in the query of every URL given (``?api_key=...&sig=...``): model specs on the
  command line and in the models file, and agents' endpoints;
* a password in a URL's userinfo: a model URL with one is refused with a message about
  credentials in URLs before anything is written; an agent's endpoint with one is used, and
  neither the password nor the ``Basic`` token the client makes of it is written.

The response cache, the verdict files and every output are kept under the temporary directory
(``TODEVAL_CACHE_DIR``, ``XDG_CACHE_HOME``), every byte of which is searched, with everything
printed. A command may fail on the server's replies (exit 5, or a failure recorded in its
output); each must have written its outputs, so the search covers something.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.retry import SystemClock
from todeval.backends.scripted import Script
from todeval.cli import main
from todeval.core.redact import REDACTED, add_url_secrets, redact
from todeval.testing.booking_model import booking_script
from todeval.testing.clarq_model import clarq_script
from todeval.testing.cli_fuzz import writing_commands
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

OPENAI_KEY = "canaryo" + secrets.token_hex(12)
MODEL_KEY = "canarym" + secrets.token_hex(12)
QUERY_KEY = "canaryq" + secrets.token_hex(12)
SIG = "canarys" + secrets.token_hex(12)
USER_PASS = "canaryu" + secrets.token_hex(12)
# what a client sends for ``user:password@`` (HTTP Basic), which the server echoes
BASIC = base64.b64encode(f"user:{USER_PASS}".encode()).decode()
CANARIES = (OPENAI_KEY, MODEL_KEY, QUERY_KEY, SIG, USER_PASS, BASIC)
QUERY = f"?api_key={QUERY_KEY}&sig={SIG}"
GIVEN = "given"  # what the test writes with canaries in it; every other file is searched

CLARQ_FIXTURE = (
    Path(__file__).parents[1]
    / "clarq/fixtures/l2l_GPT-4o_seeker_vs_GPT-4o_provider.Comp.En.json.gz"
)


@dataclass(frozen=True)
class Places:
    """Where the inputs are prepared and the outputs go, and what the server is called."""

    root: Path
    url: str

    @property
    def spec(self) -> str:
        """A model spec on the command line: credentials in its query, the key from
        ``OPENAI_API_KEY``."""
        return f"openai:m@{self.url}{QUERY}"

    @property
    def endpoint(self) -> str:
        """An agent's chat endpoint with credentials in its query."""
        return f"{self.url}/chat/completions{QUERY}"

    @property
    def models(self) -> str:
        """The models file, written by the test itself (the one file holding canaries)."""
        return str(self.root / GIVEN / "models.toml")

    def cache(self, label: str) -> str:
        """A response cache of one command line's own: no reply is served from another's."""
        return str(self.root / "cache" / f"{label}.sqlite")

    def prep(self, name: str) -> str:
        return str(self.root / "prep" / name)

    def out(self, name: str) -> str:
        return str(self.root / "out" / name)


@dataclass(frozen=True)
class Invocation:
    """One command line and the outputs it must leave."""

    label: str
    argv: tuple[str, ...]
    writes: tuple[str, ...]
    stdin: str | None = None  # played in a subprocess (``python -m todeval``) fed this
    ok: tuple[int, ...] = (0, 5)  # exit codes that mean it ran (4: a verdict of refusal)


def _run(p: Places, label: str, *argv: str, limit: str = "1") -> Invocation:
    out = p.out(label)
    return Invocation(
        label,
        ("run", *argv, "--limit", limit, "--cache-path", p.cache(label), "--out", out),
        (f"{out}/manifest.json", f"{out}/episodes.jsonl"),
    )


def _invocations(p: Places) -> dict[tuple[str, ...], list[Invocation]]:
    """Every writing command that takes a model, with its command lines: the model given as a
    spec on the command line and, where the command takes a models file, by its name there;
    agents' endpoints too. Each command line has a response cache of its own."""
    named = ("--models-file", p.models)

    def one(words: tuple[str, ...], label: str, *argv: str, also: str = "") -> Invocation:
        """A command writing ``-o`` (and ``also`` under its option, ``--csv FILE``)."""
        out, extra = p.out(label), also.split(" ", 1) if also else []
        outputs = (out, *extra[1:])
        return Invocation(label, (*words, *argv, "-o", out, *extra), outputs)

    def cached(label: str) -> tuple[str, str]:
        return ("--cache-path", p.cache(label))

    booking, items, clarq = p.prep("booking"), p.prep("items.jsonl"), p.prep("clarq")
    audit = (
        "--transcripts",
        str(CLARQ_FIXTURE),
        "--provider",
        "llm",
        "--limit",
        "1",
        "--resamples",
        "20",
    )
    realism = (booking, "--resamples", "20")
    return {
        ("review",): [
            one(("review",), "review-spec", booking, "--review-model", p.spec,
                *cached("review-spec"), also=f"--csv {p.out('review-spec.csv')}"),
            one(("review",), "review-named", booking, "--review-model", "m", *named,
                *cached("review-named"), also=f"--csv {p.out('review-named.csv')}"),
        ],
        ("booking", "review"): [
            one(("booking", "review"), "booking-review-spec", booking, "--review-model", p.spec,
                *cached("booking-review-spec"), also=f"--csv {p.out('booking-review.csv')}"),
            one(("booking", "review"), "booking-review-named", booking, "--review-model", "m",
                *named, *cached("booking-review-named")),
        ],
        ("booking", "realism", "judge"): [
            one(("booking", "realism", "judge"), "realism-spec", *realism, "--judge-model",
                p.spec, *cached("realism-spec")),
            one(("booking", "realism", "judge"), "realism-named", *realism, "--judge-model", "m",
                *named, *cached("realism-named")),
        ],
        ("run", "booking"): [
            _run(p, "booking-llm", "booking", "--system", "monolithic", "--system-model", "m",
                 *named, "--user", "llm", "--user-model", p.spec, "--max-turns", "3"),
            _run(p, "booking-modular", "booking", "--system", "modular-llm", "--system-model",
                 p.spec, "--module-model", "m", *named, "--max-turns", "2"),
            _run(p, "booking-agent", "booking", "--system", "agent", "--system-url",
                 p.endpoint, "--max-turns", "2"),
            _run(p, "booking-http", "booking", "--system", "http", "--system-url", p.endpoint,
                 "--max-turns", "2"),
        ],
        ("run", "bargain"): [
            _run(p, "bargain-llm", "bargain", "--track", "craigslist", "--model", p.spec,
                 limit="2"),
            _run(p, "bargain-agent", "bargain", "--track", "craigslist", "--labeller", "agent",
                 "--labeller-url", p.endpoint, limit="2"),
        ],
        ("run", "clarq"): [
            _run(p, "clarq-llm", "clarq", "--seeker", "llm", "--seeker-model", "m", *named,
                 "--provider", "llm", "--provider-model", p.spec, "--judge-model", p.spec,
                 "--max-messages", "6", "--limit-mode", "first"),
            _run(p, "clarq-agent", "clarq", "--seeker", "agent", "--seeker-url", p.endpoint,
                 "--max-messages", "4", "--limit-mode", "first"),
            Invocation("clarq-panel",  # a model inside a panel list
                       ("run", "clarq", "--seeker", "oracle", "--providers", f"rule,llm={p.spec}",
                        "--limit", "1", "--limit-mode", "first", "--max-messages", "4",
                        "--cache-path", p.cache("clarq-panel"), "--out", p.out("clarq-panel")),
                       (f"{p.out('clarq-panel')}/panel.json",)),
        ],
        ("run", "incar-turns"): [
            _run(p, "incar-spec", "incar-turns", "--model", p.spec),
            _run(p, "incar-named", "incar-turns", "--model", "m", *named),
        ],
        ("run", "multiwoz-turns"): [
            _run(p, "multiwoz-spec", "multiwoz-turns", "--model", p.spec),
            _run(p, "multiwoz-named", "multiwoz-turns", "--model", "m", *named),
        ],
        ("run", "toy"): [
            _run(p, "toy-llm", "toy", "--guesser", "llm", "--guesser-model", p.spec),
        ],
        # score clarq takes no cache path: its judge's replies and verdicts go next to the
        # default cache (TODEVAL_CACHE_DIR, under tmp_path) or to --judge-cache
        ("score", "clarq"): [
            one(("score", "clarq"), "score-spec", clarq, "--resamples", "20", "--judge-model",
                p.spec, also=f"--episodes {p.out('score-spec-episodes.jsonl')}"),
            one(("score", "clarq"), "score-named", clarq, "--resamples", "20", "--judge-model",
                "m", *named, also=f"--judge-cache {p.out('score-named-verdicts.jsonl')}"),
        ],
        ("data", "bargain-factory"): [
            one(("data", "bargain-factory"), "factory", "--model", p.spec, "--verifier-model",
                p.spec, "--limit", "1", "--heldout-limit", "1", "--quiet", *cached("factory"),
                also=f"--report {p.out('factory-report.json')}"),
        ],
        ("data", "bargain"): [
            one(("data", "bargain"), "bargain-set", "--generate", "--mode", "llm", "-n", "2",
                "--generator", p.spec, "--verifier", p.spec, "--max-concurrency", "2"),
        ],
        ("clarq", "audit"): [
            one(("clarq", "audit"), "audit-spec", *audit, "--provider-model", p.spec,
                *cached("audit-spec"), also=f"--turns {p.out('audit-spec-turns.jsonl')}"),
            one(("clarq", "audit"), "audit-named", *audit, "--provider-model", "m", *named,
                *cached("audit-named")),
        ],
        # annotate judge takes no cache path: the default cache (under tmp_path) for one, none
        # for the other (which would be served from it)
        ("annotate", "judge"): [
            one(("annotate", "judge"), "judge-spec", items, "--judge-model", p.spec),
            one(("annotate", "judge"), "judge-named", items, "--judge-model", "m", *named,
                "--no-cache"),
        ],
    }  # fmt: skip


MCP_CALLS = "".join(
    json.dumps(m) + "\n"
    for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "canary", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "retrievefromhoteldb",
                    "arguments": {"area": "centre", "type": "guesthouse"}}},
    )
)  # fmt: skip
"""An MCP client's session over stdio: one search of the hotel database."""


def _others(p: Places) -> dict[tuple[str, ...], list[Invocation]]:
    """Every writing command that takes no model, with a command line each: run after the
    commands of :func:`_invocations`, over what they wrote (runs whose events hold the server's
    echoes), with the canaries in the environment."""
    out = p.out
    booking, incar, multiwoz = out("booking-llm"), out("incar-spec"), out("multiwoz-spec")
    subs = out("submissions")
    archive = f"{subs}/incar.tar.gz"
    pack = str(Path(__file__).parents[2] / "src/todeval/data/multiwoz/packs/hotel")

    def one(words: tuple[str, ...], label: str, *argv: str, flag: str = "-o") -> Invocation:
        return Invocation(label, (*words, *argv, flag, out(label)), (out(label),))

    return {
        ("compare",): [one(("compare",), "compare.json", incar, out("incar-named"),
                           "--resamples", "20")],
        ("power",): [one(("power",), "power.json", out("bargain-llm"))],
        ("report",): [one(("report",), "report.html", booking, out("clarq-llm"),
                          "--transcripts", "all")],
        ("rescore",): [one(("rescore",), "rescored", booking, flag="--out")],
        ("validate",): [
            Invocation("validate", ("validate", "toy", "--only", "repeat", "--no-search",
                                    "--limit", "1", "--quiet", "--out", out("validate-runs"),
                                    "-o", out("validate.json")),
                       (out("validate.json"), out("validate-runs"))),
        ],
        ("score", "incar"): [one(("score", "incar"), "score-incar.json",
                                 f"{incar}/predictions.json", "--resamples", "20")],
        ("score", "multiwoz"): [one(("score", "multiwoz"), "score-multiwoz.json",
                                    f"{multiwoz}/predictions.json", "--resamples", "20")],
        ("data", "domain"): [
            Invocation("domain", ("data", "domain", pack, "--generate-tasks", "2", "-o",
                                  out("domain-tasks.json"), "--write-prompts",
                                  out("domain-prompts")),
                       (out("domain-tasks.json"), out("domain-prompts"))),
        ],
        ("data", "incar"): [one(("data", "incar"), "incar-export.json", "--export",
                                "--split", "dev")],
        ("annotate", "export"): [one(("annotate", "export"), "items.jsonl", "--from",
                                     out("bargain-llm"), "--n", "2")],
        ("submit", "prepare"): [
            Invocation("prepare", ("submit", "prepare", incar, "-o", archive,
                                   "--description", "canary system"), (archive,)),
        ],
        ("submit", "verify"): [  # refused or not, the verdict is written
            Invocation("verify", ("submit", "verify", archive, "-o", out("verdict.json")),
                       (out("verdict.json"),), ok=(0, 4)),
        ],
        ("leaderboard", "build"): [  # every archive refused: exit 4, the site written
            Invocation("site", ("leaderboard", "build", subs, "--quiet", "-o", out("site")),
                       (out("site"),), ok=(0, 4)),
        ],
        ("serve", "tools"): [
            Invocation("serve-tools", ("serve", "tools", "booking", "--transport", "stdio",
                                       "-o", out("tools.jsonl")),
                       (out("tools.jsonl"),), stdin=MCP_CALLS),
        ],
    }  # fmt: skip


def test_every_writer_is_in_a_table(tmp_path: Path) -> None:
    """Every command that writes is run: those taking a model in :func:`_invocations`, the
    others in :func:`_others` (both found from the parser, so a new one cannot escape)."""
    p = Places(tmp_path, "http://127.0.0.1:9/v1")
    table, others = _invocations(p), _others(p)
    found = {words for words, _ in writing_commands(taking_model=True)}
    assert found - set(table) == set(), "add these commands to _invocations"
    assert set(table) - found == set(), "these commands no longer write or take a model"
    assert len(found) >= 14
    rest = {words for words, _ in writing_commands()} - found
    assert rest - set(others) == set(), "add these commands to _others"
    assert set(others) - rest == set(), "these commands no longer write, or take a model"
    assert len(rest) >= 14


@pytest.fixture(autouse=True)
def _canaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("CANARY_MODEL_KEY", MODEL_KEY)
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    async def no_wait(self: SystemClock, seconds: float) -> None:
        return None

    monkeypatch.setattr(SystemClock, "sleep", no_wait)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    booking = booking_script()

    def verbatim(content: dict[str, Any]) -> dict[str, str]:
        """A reply sent as it is (no echo after it): for players reading strict JSON."""
        body = {"id": "w", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": json.dumps(content)},
             "finish_reason": "stop"}
        ]}  # fmt: skip
        return {"raw_body": json.dumps(body)}

    # the bargain set's generator (a buyer's message) and the toy's guesser (isolated)
    weaver = Script.model_validate(
        {"rules": [{"match": r"Answer only with a JSON object \{\"message\"",
                    "reply": verbatim({"message": "Is the lamp still there? Could you do 20?"})},
                   {"match": r"\{\"guess\": <your number>\}",
                    "reply": verbatim({"guess": 50})}]}
    )  # fmt: skip
    rules = [*weaver.rules, *clarq_script().rules]
    script = Script(rules=rules, replies=booking.replies, default=booking.default)
    server = ServerProcess(ServerConfig(script=script, echo_authorization=True))
    try:
        yield server.start().base_url
    finally:
        server.close()


def _leaks(data: bytes) -> list[str]:
    return [c for c in CANARIES if c.encode() in data]


def _written_leaks(root: Path, at_least: int) -> dict[str, list[str]]:
    """The canaries in each file under ``root`` (but the test's own inputs), by file; there
    must be ``at_least`` files to search."""
    written = [f for f in root.rglob("*") if f.is_file() and GIVEN not in f.relative_to(root).parts]
    assert len(written) >= at_least, written
    leaking = {str(f.relative_to(root)): _leaks(f.read_bytes()) for f in written}
    return {f: keys for f, keys in leaking.items() if keys}


def _prepare(p: Places, cli: Callable[..., None]) -> None:
    """The models file, and inputs made without the server: a booking run with failures
    (review, realism), a bargain run and items exported from it (annotate judge), a ClarQ
    self-play of scripted models leaving a reworded release for a judge (score clarq)."""
    given = Path(p.models).parent
    given.mkdir()
    Path(p.models).write_text(
        f'[models.m]\nspec = "openai:m@{p.url}{QUERY}"\napi_key_env = "CANARY_MODEL_KEY"\n'
    )
    scripted = f"scripted:{given / 'clarq.json'}"
    (given / "clarq.json").write_text(clarq_script().model_dump_json())
    cli("prep-booking", "run", "booking", "--system", "silent", "--limit", "2", "--limit-mode",
        "first", "--max-turns", "3", "--quiet", "--out", p.prep("booking"))  # fmt: skip
    cli("prep-bargain", "run", "bargain", "--track", "craigslist", "--labeller", "keyword",
        "--limit", "3", "--quiet", "--out", p.prep("bargain"))  # fmt: skip
    cli("prep-items", "annotate", "export", "--from", p.prep("bargain"), "--n", "2", "-o",
        p.prep("items.jsonl"))  # fmt: skip
    cli("prep-clarq", "run", "clarq", "--seeker", "llm", "--seeker-model", scripted,
        "--provider", "llm", "--provider-model", scripted, "--limit", "1", "--limit-mode",
        "first", "--no-cache", "--quiet", "--out", p.prep("clarq"))  # fmt: skip


def test_every_writer_keeps_every_canary_out(
    server_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = Places(tmp_path, server_url)
    (tmp_path / "out").mkdir()
    printed: list[str] = []
    codes: dict[str, int] = {}

    def cli(label: str, *argv: str) -> None:
        codes[label] = main(list(argv))
        out, err = capsys.readouterr()
        printed.extend([out, err])

    def sub(entry: Invocation) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "todeval", *entry.argv], input=entry.stdin,
            capture_output=True, text=True, timeout=120, check=False, env=dict(os.environ),
        )  # fmt: skip
        codes[entry.label] = done.returncode
        printed.extend([done.stdout, done.stderr])

    _prepare(p, cli)
    assert set(codes.values()) == {0}, (codes, printed)
    table = {**_invocations(p), **_others(p)}
    Path(p.out("submissions")).mkdir()
    for entries in table.values():
        for entry in entries:
            if entry.stdin is not None:
                sub(entry)
            else:
                cli(entry.label, *entry.argv)
    terminal = "\n".join(printed)
    report = {e.label: codes[e.label] for entries in table.values() for e in entries}
    assert [line for line in terminal.splitlines() if _leaks(line.encode())] == []
    assert _written_leaks(tmp_path, 50) == {}
    # the key a models file names reached the server, which echoed it into a recorded reply
    named = (tmp_path / "out" / "incar-named" / "episodes.jsonl").read_text()
    assert f"Authorization: Bearer {REDACTED}" in named
    # the spec is recorded, its URL's credentials are not
    manifest = (tmp_path / "out" / "incar-spec" / "manifest.json").read_text()
    assert f"api_key={REDACTED}&sig={REDACTED}" in manifest
    missing = [w for entries in table.values() for e in entries for w in e.writes
               if not Path(w).exists()]  # fmt: skip
    assert missing == [], (missing, report)
    failed = {e.label for entries in table.values() for e in entries if codes[e.label] not in e.ok}
    assert failed == set(), (report, terminal)


def test_userinfo_is_refused_or_redacted(
    server_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model URL with ``user:password@`` is refused with a message about credentials in
    URLs, on the command line (exit 2) and in a models file (exit 3, a bad input file), before
    anything is written; an agent's endpoint with one is used (HTTP Basic) and its run records
    neither the URL's password nor the token a server echoes."""
    p = Places(tmp_path, server_url)
    (tmp_path / "out").mkdir()
    userinfo = server_url.replace("http://", f"http://user:{USER_PASS}@")
    spec = f"openai:m@{userinfo}"
    Path(p.models).parent.mkdir()
    Path(p.models).write_text(f'[models.m]\nspec = "{spec}"\napi_key_env = "CANARY_MODEL_KEY"\n')
    refused = {
        "toy": ("run", "toy", "--guesser", "llm", "--guesser-model", spec, "--limit", "1",
                "--out", p.out("toy")),
        "incar-named": ("run", "incar-turns", "--model", "m", "--models-file", p.models,
                        "--limit", "1", "--out", p.out("incar")),
        "factory": ("data", "bargain-factory", "--model", spec, "--limit", "1",
                    "--heldout-limit", "1", "-o", p.out("factory.json")),
        "audit": ("clarq", "audit", "--transcripts", str(CLARQ_FIXTURE), "--provider", "llm",
                  "--provider-model", spec, "--limit", "1", "-o", p.out("audit.json")),
        "booking-named": ("run", "booking", "--system", "monolithic", "--system-model", "m",
                          "--models-file", p.models, "--limit", "1", "--out", p.out("booking")),
    }  # fmt: skip
    for label, refused_argv in refused.items():
        code = main(list(refused_argv))
        out, err = capsys.readouterr()
        assert code == (3 if label.endswith("-named") else 2), (label, out, err)  # 3: the file
        assert "credentials in URLs" in err, (label, err)
        assert not _leaks((out + err).encode()), (label, out, err)
    assert [f for f in (tmp_path / "out").rglob("*") if f.is_file()] == []
    endpoint = f"{userinfo}/chat/completions"
    agent = p.out("agent")
    argv = ["run", "clarq", "--seeker", "agent", "--seeker-url", endpoint, "--limit", "1",
            "--max-messages", "4", "--cache-path", p.cache("agent"), "--out", agent]  # fmt: skip
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 5), (code, err)  # used: the agent answered (echoing Basic <token>)
    assert f"http://{REDACTED}@127.0.0.1" in (Path(agent) / "manifest.json").read_text()
    assert "Authorization: Basic" in (Path(agent) / "episodes.jsonl").read_text()
    assert not _leaks((out + err).encode()), (out, err)
    assert _written_leaks(tmp_path, 3) == {}


def test_basic_credentials_are_redacted() -> None:
    """What a client sends for a URL's userinfo (HTTP Basic) is redacted by shape, and by value
    once the URL is known; text that merely says "Basic" is left alone."""
    token = base64.b64encode(b"someone:pw-4-basic-test").decode()
    assert redact(f"you sent Authorization: Basic {token})") == (
        f"you sent Authorization: Basic {REDACTED})"
    )
    for kept in ("a Basic 2-bedroom flat", "Basic training", "Basic"):
        assert redact(kept) == kept
    password = "canaryb" + secrets.token_hex(6)
    add_url_secrets(f"http://someone:{password}@127.0.0.1:9/chat?x=1")
    echoed = base64.b64encode(f"someone:{password}".encode()).decode()
    assert redact(f"{echoed} and {password}") == f"{REDACTED} and {REDACTED}"


def test_isolated_runs_keep_every_canary_out(
    server_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run path the table does not take: a ``package.module:Class`` player on a model in the
    bubblewrap sandbox (``--isolate``, its key passed in by ``--isolate-env``), with
    credentials in the model URL's query. Every byte under the test's folder is searched; a
    model URL with userinfo is refused."""
    p = Places(tmp_path, server_url)
    printed: list[str] = []
    userinfo = f"openai:m@{server_url.replace('http://', f'http://user:{USER_PASS}@')}"

    def cli(*argv: str) -> int:
        code = main(list(argv))
        out, err = capsys.readouterr()
        printed.extend([out, err])
        return code

    isolated = p.out("isolated")
    guesser = "tests.integrity.canary_guesser:CanaryGuesser"
    code = cli("run", "toy", "--guesser", guesser, "--guesser-model", p.spec, "--isolate",
               "--isolate-env", "OPENAI_API_KEY", "--limit", "2", "--quiet", "--cache-path",
               p.cache("isolated"), "--out", isolated)  # fmt: skip
    assert code in (0, 5), printed
    records = [json.loads(x) for x in Path(isolated, "episodes.jsonl").read_text().splitlines()]
    assert {r["channels"]["guesser"] for r in records} == {"isolated"}
    assert any(r["usage"].get("guesser", {}).get("calls") for r in records), records[0]["usage"]
    refused = cli("run", "toy", "--guesser", guesser, "--guesser-model", userinfo, "--isolate",
                  "--limit", "1", "--out", p.out("isolated-userinfo"))  # fmt: skip
    assert refused == 2 and "credentials in URLs" in printed[-1], printed[-2:]

    assert [line for line in "\n".join(printed).splitlines() if _leaks(line.encode())] == []
    assert _written_leaks(tmp_path, 6) == {}


def _ray_cluster_class() -> type[Any]:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is not installed but CI=true requires it")
        pytest.skip("Ray not installed")
    from todeval.testing.ray_cluster import LocalRayCluster

    return LocalRayCluster


def test_ray_runs_keep_every_canary_out(server_url: str, tmp_path: Path) -> None:
    """The other run path the table does not take: a run on a local Ray cluster (``--executor
    ray``: a head and one worker node started with the canaries in their environment), with
    credentials in the model URLs' queries and a models file naming a key variable. Every byte
    under the test's folder and the cluster's (Ray's logs, the driver's among them) is
    searched, with everything printed; a model URL with userinfo is refused.

    The driver is a ``todeval`` process of its own with the cluster's environment, as a user's
    would be, not :func:`main` in this process: a test run here before with a private Ray
    (``--executor ray`` without an address) leaves Ray's token authentication on in this
    process for good (Ray sets ``RAY_AUTH_MODE=token`` and its native side keeps it), and a
    driver with it on loses every actor it starts on a cluster without authentication at once
    (ActorDiedError, the owner reported dead), which is how this run failed in the full suite."""
    p = Places(tmp_path, server_url)
    given = Path(p.models).parent
    given.mkdir()
    Path(p.models).write_text(
        f'[models.m]\nspec = "openai:m@{p.url}{QUERY}"\napi_key_env = "CANARY_MODEL_KEY"\n'
    )
    printed: list[str] = []
    userinfo = f"openai:m@{server_url.replace('http://', f'http://user:{USER_PASS}@')}"

    with _ray_cluster_class()(workers=1) as cluster:

        def cli(*argv: str) -> int:
            done = subprocess.run(
                [sys.executable, "-m", "todeval", *argv, "--executor", "ray", "--ray-address",
                 cluster.address],
                env=cluster.env(),  # this process's, canaries included, and Ray's settings
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )  # fmt: skip
            printed.extend([done.stdout, done.stderr])
            return done.returncode

        on_ray = p.out("ray")
        for _ in range(3):  # exit 5 (episodes to retry, e.g. a call timed out under load): rerun
            code = cli("run", "booking", "--system", "monolithic", "--system-model", "m",
                       "--models-file", p.models, "--user", "llm", "--user-model", p.spec,
                       "--max-turns", "2", "--limit", "2", "--max-concurrency", "2", "--quiet",
                       "--cache-path", p.cache("ray"), "--out", on_ray)  # fmt: skip
            if code != 5:
                break
        assert code == 0, printed[-4:]
        manifest = json.loads(Path(on_ray, "manifest.json").read_text())
        assert manifest["sessions"][-1]["executor"] == "ray (1 worker on 1 node)"
        lines = Path(on_ray, "episodes.jsonl").read_text().splitlines()
        assert len(lines) == 2, printed[-4:]
        refused = cli("run", "booking", "--system", "monolithic", "--system-model", userinfo,
                      "--limit", "1", "--out", p.out("ray-userinfo"))  # fmt: skip
        assert refused == 2 and "credentials in URLs" in printed[-1], printed[-2:]
        ray_leaks = _written_leaks(cluster._root(), 5)
    assert [line for line in "\n".join(printed).splitlines() if _leaks(line.encode())] == []
    assert ray_leaks == {}
    assert _written_leaks(tmp_path, 3) == {}
    ray_records = [json.loads(x) for x in lines]
    assert {r["channels"]["system"] for r in ray_records} == {"built-in"}  # named on Ray too
    assert "Authorization: Bearer" in "\n".join(lines)  # the server echoed the key it was sent
