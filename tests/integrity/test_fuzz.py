"""Fuzzing every file a user hands us (issue 16, "Done means"): over 1,000 seeded mutations of
MultiWOZ, In-Car and ClarQ prediction files, models files and panel files go through
``main(argv)`` in process, about 50 more as subprocesses, each with a time limit: no
traceback, no exit 1, no hang, every rejection one ``todeval: error:`` line with exit 3. And
hostile model replies (deep nesting, huge strings, NaN/Infinity, a lone surrogate, wrong
types) through the local OpenAI-compatible test server: each a recorded format violation,
never an infrastructure error."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from todeval.backends import Script, make_backend
from todeval.backends.scripted import ScriptedReply, ScriptedToolCall
from todeval.benchmarks.booking.game import play_episode
from todeval.benchmarks.booking.llm_systems.monolithic import MonolithicSystem
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

from ..booking.scripted import ScriptedUser
from ..booking.test_llm_systems_support import TASK, USER_LINES, options
from .fuzz import CASE_TIMEOUT_S, mutate, problem, run_main, write_case
from .fuzz import Outcome as CaseOutcome

ROOT = Path(__file__).resolve().parents[1]
MULTIWOZ = ROOT / "fixtures" / "multiwoz_predictions" / "damd.json.gz"
CLARQ = ROOT / "clarq" / "fixtures" / "l2l_GPT-4o_seeker_vs_GPT-4o_provider.Comp.En.json.gz"

# cases per kind (1,020 in process; 10 of each kind again as subprocesses)
CASES = {"multiwoz": 60, "incar": 30, "clarq": 120, "models": 100, "panel": 150}
SUBPROCESS_CASES = 10


def _multiwoz_base() -> bytes:
    data = json.loads(gzip.decompress(MULTIWOZ.read_bytes()))
    return json.dumps({k: data[k] for k in list(data)[:2]}).encode()


def _incar_base(tmp: Path) -> bytes:
    path = tmp / "incar-gold.json"
    assert (
        run_main(["data", "incar", "--export", "--predictions-format", "-o", str(path)]).code == 0
    )
    data = json.loads(path.read_text())
    return json.dumps({k: data[k] for k in list(data)[:2]}).encode()


def _clarq_base() -> bytes:
    data = json.loads(gzip.decompress(CLARQ.read_bytes()))
    return json.dumps([data[0][:2]]).encode()


def _models_base(tmp: Path) -> bytes:
    script = tmp / "reply.json"
    script.write_text(json.dumps({"default": {"text": "hello there"}}))
    return (
        f'[models.m]\nspec = "scripted:{script}"\nprice_in_per_1m = 1.5\n'
        "price_out_per_1m = 2.0\ntimeout_s = 30\n"
    ).encode()


PANEL_BASE = (
    b'[[host]]\nname = "rule"\nplayer = "rule"\n\n'
    b'[[host]]\nname = "vague"\nplayer = "vague"\n\n'
    b'[[guesser]]\nname = "bisect"\nplayer = "bisect"\n'
)


def _argv(kind: str, path: Path, out: Path) -> list[str]:
    if kind == "multiwoz":
        return ["score", "multiwoz", str(path), "--resamples", "5", "-o", str(out)]
    if kind == "incar":
        return ["score", "incar", str(path), "--resamples", "5", "-o", str(out)]
    if kind == "clarq":
        return ["score", "clarq", str(path), "--offline", "--resamples", "5", "-o", str(out)]
    if kind == "models":
        return ["run", "booking", "--system", "monolithic", "--system-model", "m",
                "--models-file", str(path), "--limit", "1", "--quiet",
                "--out", str(out)]  # fmt: skip
    return ["run", "toy", "--panel", str(path), "--limit", "1", "--quiet", "--out", str(out)]


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("fuzz-bases")
    return {
        "multiwoz": _multiwoz_base(),
        "incar": _incar_base(tmp),
        "clarq": _clarq_base(),
        "models": _models_base(tmp),
        "panel": PANEL_BASE,
    }


def _cases(kind: str, base: bytes, n: int, seed: int) -> list[bytes]:
    rng = random.Random(f"fuzz:{kind}:{seed}")
    return [mutate(base, rng, toml=kind in ("models", "panel")) for _ in range(n)]


def test_the_unmutated_bases_are_accepted(bases: dict[str, bytes], tmp_path: Path) -> None:
    for kind, base in bases.items():
        path = write_case(tmp_path / f"{kind}.in", base)
        outcome = run_main(_argv(kind, path, tmp_path / f"{kind}.out"))
        assert outcome.code == 0, (kind, outcome.err)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_mutated_files_in_process(kind: str, bases: dict[str, bytes], tmp_path: Path) -> None:
    failures: list[tuple[int, str, str]] = []
    codes: Counter[int | None] = Counter()
    for i, data in enumerate(_cases(kind, bases[kind], CASES[kind], seed=0)):
        path = write_case(tmp_path / f"case{i}.in", data)
        outcome = run_main(_argv(kind, path, tmp_path / f"out{i}"))
        codes[outcome.code] += 1
        found = problem(outcome)
        if found:
            failures.append((i, found, outcome.err[-400:]))
    assert not failures, f"{len(failures)} of {CASES[kind]} cases failed: {failures[:3]}"
    assert codes[3] > CASES[kind] // 4, codes  # the mutations do reach the readers' checks


def _subprocess(argv: list[str]) -> CaseOutcome:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "todeval.cli", *argv],
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return CaseOutcome(None, "")
    return CaseOutcome(proc.returncode, proc.stderr)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_mutated_files_as_subprocesses(kind: str, bases: dict[str, bytes], tmp_path: Path) -> None:
    failures = []
    for i, data in enumerate(_cases(kind, bases[kind], SUBPROCESS_CASES, seed=1)):
        path = write_case(tmp_path / f"case{i}.in", data)
        outcome = _subprocess(_argv(kind, path, tmp_path / f"out{i}"))
        found = problem(outcome)
        if found:
            failures.append((i, found, outcome.err[-400:]))
    assert not failures, failures[:3]


# -- hostile model replies through the test server ---------------------------------------------


def _call(arguments: dict[str, Any] | str, name: str = "followup") -> ScriptedReply:
    return ScriptedReply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _surrogate_body() -> str:
    message = {"role": "assistant", "content": '{"message": "\ud800\udfff\ud800"}'}
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    )


HOSTILE_REPLIES: dict[str, ScriptedReply] = {
    "deep arguments": _call('{"message": ' + _deep(1000) + "}"),
    "deep text": ScriptedReply(text='{"tool": "followup", "arguments": ' + _deep(5000) + "}"),
    "huge argument string": _call({"message": "x" * 2_000_000}),
    "huge text": ScriptedReply(text="y" * 1_500_000),
    "NaN argument": _call('{"message": NaN}'),
    "Infinity argument": _call('{"message": Infinity, "n": -Infinity}'),
    "arguments a list": _call("[1, 2, 3]"),
    "arguments null": _call("null"),
    "arguments a number": _call("42"),
    "arguments unparseable": _call('{"message": '),
    "message a number": _call({"message": 12}),
    "unknown tool": _call({"x": 1}, name="os.system"),
    "lone surrogates": ScriptedReply(raw_body=_surrogate_body()),
    "empty reply": ScriptedReply(text=""),
}


async def _episode(base_url: str) -> EpisodeRecord:
    backend = make_backend(f"openai:scripted@{base_url}")
    try:
        system = MonolithicSystem.from_options(options(backend))
        return await play_episode(TASK, system, ScriptedUser(list(USER_LINES)), run_seed=0)
    finally:
        await backend.aclose()


@pytest.mark.parametrize("case", sorted(HOSTILE_REPLIES))
def test_hostile_model_replies_are_format_violations(case: str) -> None:
    config = ServerConfig(script=Script(replies=[HOSTILE_REPLIES[case]]))
    with ServerProcess(config) as server:
        record = asyncio.run(_episode(server.base_url))
    assert record.outcome is not Outcome.INFRASTRUCTURE_ERROR, record.reason
    assert record.outcome is Outcome.ABORTED, (record.outcome, record.reason)
    assert record.metrics["booking.format_violations"] == 1.0
    EpisodeRecord.model_validate_json(record.model_dump_json())  # the record round-trips
