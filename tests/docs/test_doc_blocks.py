"""Every code block of README.md and docs/*.md does what its info string promises (blocks.py).

Shell and Python blocks that can run offline run as written, one temporary directory per
document (shared by its blocks, in order); the others are checked as far as a test can: the
``todeval`` commands parse, fragments compile and import, excerpts match their source file.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.docs.blocks import (
    LANGUAGES,
    ROOT,
    TAGS,
    Block,
    all_blocks,
    blocks,
    commands,
    excerpt_sections,
    matches,
    shell_script,
)
from todeval.cli import build_parser

BLOCKS = all_blocks()
SHELL = ("bash", "sh")
RUN_TIMEOUT_S = 600


def _ids(items: list[Block]) -> list[str]:
    return [b.id for b in items]


def _of(kind: str) -> list[Block]:
    def wanted(b: Block) -> bool:
        if kind == "shell":
            return b.language in SHELL and not b.tags
        if kind == "parse":
            return b.language in SHELL and "model" in b.tags
        if kind == "python":
            return b.language == "python" and not b.tags and "file" not in b.options
        return b.language == "python" and kind in b.tags

    return [b for b in BLOCKS if wanted(b)]


def test_every_block_declares_what_it_is() -> None:
    assert len(BLOCKS) > 50
    for block in BLOCKS:
        assert block.language in LANGUAGES, f"{block.id}: info string {block.language!r}"
        assert block.tags <= TAGS, f"{block.id}: unknown tag {sorted(block.tags - TAGS)}"
        assert set(block.options) <= {"file"}, f"{block.id}: unknown option {block.options}"


def test_the_readme_starts_with_its_two_commands() -> None:
    first, second = blocks(ROOT / "README.md")[:2]
    assert first.language == "bash" and not first.tags  # run below, as written
    assert "todeval run booking" in first.code
    assert "pytest" in second.code and second.tags == {"ci"}
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    quiet_install = second.code.strip().replace("pip install ", "pip install -q ")
    assert quiet_install in ci  # .ci/run runs the README's test command


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """One working directory per document: the repository's example folders linked in, and the
    document's ``python file=PATH`` blocks written."""
    out: dict[Path, Path] = {}
    for block in BLOCKS:
        if block.document in out:
            continue
        work = tmp_path_factory.mktemp(block.document.stem)
        for name in ("tests", "examples", "bench"):
            (work / name).symlink_to(ROOT / name)
        for b in blocks(block.document):
            if b.language == "python" and "file" in b.options:
                target = work / b.options["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(b.code, encoding="utf-8")
        out[block.document] = work
    return out


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PWD"] = str(work)
    for key in [k for k in env if k.endswith("_API_KEY") or k == "OPENAI_BASE_URL"]:
        del env[key]  # offline: nothing may reach a model
    return env


def _run_in(work: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in a document's working directory, offline, output captured."""
    return subprocess.run(
        argv,
        cwd=work,
        env=_env(work),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def _without_installs(command: str) -> str:
    parts = [p.strip() for p in command.split("&&")]
    kept = [p for p in parts if not p.startswith("pip install")]
    return " && ".join(kept)


def _run_block(work: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``bash -e -c script`` in its own session; whatever it started in the background (its
    servers) is stopped once it ended."""
    proc = subprocess.Popen(
        ["bash", "-e", "-c", script],
        cwd=work,
        env=_env(work),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        _stop_group(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the block's process group (its servers), SIGKILL what is left after 10 s."""
    for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            continue
        break
    proc.wait()


@pytest.mark.parametrize("block", _of("shell"), ids=_ids(_of("shell")))
def test_shell_block_runs_as_written(block: Block, workdirs: dict[Path, Path]) -> None:
    work = workdirs[block.document]
    script = shell_script([c for c in map(_without_installs, commands(block.code)) if c])
    proc = _run_block(work, script)
    assert proc.returncode == 0, f"{block.id}\n{script}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"


def _todeval_argv(command: str) -> list[str] | None:
    """The arguments of a ``todeval`` command (after any ``VAR=value`` and before ``&``)."""
    # a synopsis's optional parts, ``[--flag VALUE]``, are left out
    words = shlex.split(re.sub(r"\[[^\]]*\]", " ", command.rstrip("&").strip()), comments=True)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    if not words or words[0] != "todeval":
        return None
    return words[1:]


@pytest.mark.parametrize("block", _of("parse"), ids=_ids(_of("parse")))
def test_model_block_commands_parse(block: Block, capsys: pytest.CaptureFixture[str]) -> None:
    argvs = [a for a in map(_todeval_argv, commands(block.code)) if a is not None]
    assert argvs, f"{block.id}: no todeval command"
    for argv in argvs:
        parser = build_parser(argv)
        try:
            args, extras = parser.parse_known_args(argv)
        except SystemExit:
            pytest.fail(f"{block.id}: todeval {' '.join(argv)}\n{capsys.readouterr().err}")
        assert not extras, f"{block.id}: todeval {' '.join(argv)}: unknown {extras}"
        assert callable(getattr(args, "_run", None))


def _source(code: str) -> str:
    tree = ast.parse(code, mode="exec", type_comments=False)
    awaits = any(isinstance(n, ast.Await) for n in ast.walk(tree))
    if not awaits:
        return code
    body = "\n".join("    " + line for line in code.splitlines())
    return f"import asyncio\n\nasync def _main():\n{body}\n\nasyncio.run(_main())\n"


@pytest.mark.parametrize("block", _of("python"), ids=_ids(_of("python")))
def test_python_block_runs_as_written(block: Block, workdirs: dict[Path, Path]) -> None:
    work = workdirs[block.document]
    proc = _run_in(work, [sys.executable, "-c", _source(block.code)])
    assert proc.returncode == 0, f"{block.id}\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("block", _of("fragment"), ids=_ids(_of("fragment")))
def test_python_fragment_compiles_and_imports(block: Block) -> None:
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    compile(block.code, block.id, "exec", flags=flags)
    tree = ast.parse(block.code)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), block.id, "exec"), {})


def _resolve(path: str) -> Path:
    for base in (ROOT, ROOT / "tests" / "toy_plugin"):
        if (base / path).is_file():
            return base / path
    raise AssertionError(f"no such file: {path}")


@pytest.mark.parametrize("block", _of("excerpt"), ids=_ids(_of("excerpt")))
def test_python_excerpt_matches_its_source(block: Block) -> None:
    sections = excerpt_sections(block.code)
    assert sections, f"{block.id}: an excerpt names its file in a '# <path>' comment"
    for path, lines in sections:
        source = [
            line.split("  #")[0].strip()
            for line in _resolve(path).read_text(encoding="utf-8").splitlines()
        ]
        at = 0
        for line in lines:
            found = next((i for i in range(at, len(source)) if matches(line, source[i])), None)
            if found is None:
                pytest.fail(f"{block.id}: {line!r} is not in {path} (after line {at})")
            at = found + 1


@pytest.mark.parametrize(
    "block",
    [b for b in BLOCKS if b.language in ("json", "toml")],
    ids=_ids([b for b in BLOCKS if b.language in ("json", "toml")]),
)
def test_data_block_parses(block: Block) -> None:
    if block.language == "json":
        json.loads(block.code)
    else:
        tomllib.loads(block.code)
