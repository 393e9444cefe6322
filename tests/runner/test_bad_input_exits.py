"""Exit 2 or 3, never 1 (issue 16, finding 8): bad options and bad files get one line and the
documented code, for every run command; a read-only run directory and a full disk too (run
as a process without the power to ignore permissions, and on a small tmpfs)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import todeval.runner.command as run_command
from todeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLOSED = "openai:m@http://127.0.0.1:9/v1"  # never called: every case fails before a call
OFFLINE = {
    "booking": ["run", "booking"],
    "clarq": ["run", "clarq", "--seeker", "oracle"],
    "bargain": ["run", "bargain", "--track", "craigslist", "--labeller", "random"],
    "multiwoz-turns": ["run", "multiwoz-turns", "--model", CLOSED],
    "incar-turns": ["run", "incar-turns", "--model", CLOSED],
    "toy": ["run", "toy"],
}


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("todeval: error: "), err
    return lines[0]


@pytest.mark.parametrize("bench", sorted(OFFLINE))
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--trials", "0"], "--trials must be at least 1"),
        (["--max-concurrency", "0"], "--max-concurrency must be at least 1"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--seed", "-1"], "--seed must be a whole number"),
        (["--out", "{file}"], "is a file, not a directory"),
        (["--out", "{file}/run"], "which is a file, not a directory"),
    ],
)
def test_bad_run_options_are_usage_errors(
    bench: str,
    options: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    existing = tmp_path / "a-file"
    existing.write_text("keep me\n")
    options = [o.replace("{file}", str(existing)) for o in options]
    argv = [*OFFLINE[bench], "--limit", "2", "--quiet", "--no-cache"]
    if "--out" not in options:
        argv += ["--out", str(tmp_path / "run")]
    assert main([*argv, *options]) == 2
    assert message in _one_line(capsys)
    assert existing.read_text() == "keep me\n"
    assert not (tmp_path / "run").exists()


def _booking_llm(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "run",
        "booking",
        "--system",
        "monolithic",
        "--system-model",
        "m",
        "--limit",
        "2",
        "--quiet",
        "--out",
        str(tmp_path / "run"),
        *extra,
    ]


def test_a_binary_models_file_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models.toml"
    models.write_bytes(bytes(range(256)) * 4)
    assert main(_booking_llm(tmp_path, "--models-file", str(models))) == 3
    assert "is not UTF-8 text" in _one_line(capsys)


@pytest.mark.parametrize("suffix", ["toml", "yaml"])
def test_a_models_file_nested_300_deep_is_exit_3(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = tmp_path / f"models.{suffix}"
    if suffix == "toml":
        deep = "{a = " * 300 + "1" + " }" * 300
        models.write_text(
            f'[models.m]\nspec = "openai:m@http://127.0.0.1:9/v1"\ngeneration = {deep}\n'
        )
    else:
        deep = "{a: " * 300 + "1" + "}" * 300
        models.write_text(
            f"models:\n  m:\n    spec: openai:m@http://127.0.0.1:9/v1\n    generation: {deep}\n"
        )
    assert main(_booking_llm(tmp_path, "--models-file", str(models))) == 3
    assert "nested deeper than 64 levels" in _one_line(capsys)


def test_a_binary_panel_file_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_bytes(b"\xff\xfe\x00" * 100)
    argv = ["run", "booking", "--panel", str(panel), "--limit", "1", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 3
    assert str(panel) in _one_line(capsys)


def test_a_panel_player_that_is_not_a_class_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text('[[user]]\nname = "shell"\nplayer = "os:system"\n')
    argv = ["run", "booking", "--panel", str(panel), "--limit", "1", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 3  # the file is wrong
    assert "'os:system' is not a class" in _one_line(capsys)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("with_manifest", [False, True])
def test_episodes_jsonl_being_a_directory_is_exit_3(
    with_manifest: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["run", "booking", "--limit", "2", "--quiet", "--out", str(out)]
    if with_manifest:
        assert main(argv) == 0
        (out / "episodes.jsonl").unlink()
        (out / "summary.json").unlink()
    (out / "episodes.jsonl").mkdir(parents=True)
    assert main(argv) == 3
    assert "episodes.jsonl is a directory, not an episodes file" in _one_line(capsys)


def test_a_response_cache_of_another_schema_is_exit_3_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache.sqlite"
    with sqlite3.connect(cache) as db:
        db.execute("CREATE TABLE replies (id INTEGER PRIMARY KEY, payload BLOB)")
    argv = _booking_llm(tmp_path, "--cache-path", str(cache))
    argv[argv.index("m")] = CLOSED
    assert main(argv) == 3
    assert "not a todeval response cache" in _one_line(capsys)
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


def test_debug_is_accepted_after_the_sub_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(run_command, "execute_plan", broken)
    argv = ["run", "booking", "--limit", "1", "--quiet", "--out", str(tmp_path / "run")]
    assert main(argv) == 1
    assert "internal error: RuntimeError: a bug (rerun with --debug)" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="a bug"):
        main([*argv, "--debug"])
    with pytest.raises(RuntimeError, match="a bug"):
        main(["--debug", *argv])


# -- the run directory cannot be written -------------------------------------------------------


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "todeval", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _unprivileged(argv: list[str]) -> list[str]:
    """``argv`` run without the power to ignore file permissions.

    As root, the process keeps uid 0 (the interpreter may live under a directory only root may
    enter) but loses CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, so permissions
    apply to it as to any user; as another user, nothing needs dropping."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        if os.environ.get("CI") == "true":
            pytest.fail("setpriv (util-linux) is needed to run the CLI without root's powers")
        pytest.skip("setpriv (util-linux) is missing: cannot drop root's powers")
    drop = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", *argv]


def _episodes(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [line for line in text.splitlines(keepends=True) if line.endswith("\n")]


def test_a_read_only_run_directory_is_exit_3_and_left_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["run", "booking", "--limit", "4", "--limit-mode", "first", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    lines = _episodes(out / "episodes.jsonl")
    (out / "episodes.jsonl").write_text("".join(lines[:2]))  # as if killed after two episodes
    (out / "summary.json").unlink()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for path in (out, *out.iterdir()):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        proc = subprocess.run(
            _unprivileged(_cli(*argv)), env=_env(), capture_output=True, text=True, timeout=120
        )
    finally:
        for path in (out, *out.iterdir()):
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert proc.returncode == 3, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert err[0].startswith(f"todeval: error: cannot write {out}/")
    assert "(Permission denied)" in err[0]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def _in_small_tmpfs(mount: Path, size: str, script: str) -> list[str]:
    """A shell ``script`` run in a private mount namespace with a tmpfs of ``size`` on
    ``mount`` (root: ``unshare -m``; another user: a user namespace, ``unshare -rm``). The
    namespace and its mount vanish with the process, so nothing is left on the machine."""
    unshare = shutil.which("unshare")
    if unshare is None:
        if os.environ.get("CI") == "true":
            pytest.fail("unshare (util-linux) is needed for the full-disk test")
        pytest.skip("unshare (util-linux) is missing: no small tmpfs for the full-disk test")
    flags = "-m" if os.geteuid() == 0 else "-rm"
    probe = subprocess.run(
        [unshare, flags, "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {mount}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        reason = f"cannot mount a tmpfs here ({probe.stderr.strip()})"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    mounted = f"mount -t tmpfs -o size={size} tmpfs {mount} && {script}"
    return [unshare, flags, "sh", "-c", mounted]


def test_a_full_disk_is_exit_3_and_keeps_every_finished_episode(tmp_path: Path) -> None:
    mount, kept = tmp_path / "small", tmp_path / "kept"
    mount.mkdir()
    kept.mkdir()
    argv = ["run", "booking", "--quiet", "--max-concurrency", "1"]
    cli = " ".join(_cli(*argv, "--out", str(mount / "run")))
    # run on a 160 kB disk (the 117 episodes need about 10 times that), then copy out what
    # it holds before the namespace (and the tmpfs) goes away
    script = f"{cli} 2> {kept}/stderr; rc=$?; cp -a {mount}/run {kept}/run; exit $rc"
    proc = subprocess.run(
        _in_small_tmpfs(mount, "160k", script), env=_env(), capture_output=True, timeout=300
    )
    err = (kept / "stderr").read_text().strip().splitlines()
    assert proc.returncode == 3, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith("todeval: error: cannot write ")
    assert "(No space left on device)" in err[0] and err[0].endswith("run the same command")
    run = kept / "run"
    finished = _episodes(run / "episodes.jsonl")
    assert 0 < len(finished) < 117
    assert all(json.loads(line)["outcome"] == "success" for line in finished)
    # with space again, the same command continues it: nothing lost, nothing rewritten
    resumed = subprocess.run(
        _cli(*argv, "--out", str(run)), env=_env(), capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    after = _episodes(run / "episodes.jsonl")
    assert after[: len(finished)] == finished and len(after) == 117
