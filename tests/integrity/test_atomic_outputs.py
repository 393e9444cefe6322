"""Every output is written whole or not at all (issue 16, finding 11).

A disk that fills half-way through a write (simulated: the write puts half its bytes down, then
fails with ENOSPC) leaves the previous file byte for byte, no temporary file beside it, and the
command exits 3 with one line -- for ``report -o``, ``compare -o``, ``score incar -o``,
``score multiwoz -o``, ``annotate export -o`` and the run directory's summary and manifest. A
real full disk (a small tmpfs in a private mount namespace) gives the same for ``report -o``.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest

import todeval.core.files as files
from todeval.cli import main
from todeval.core.files import write_atomic, write_output
from todeval.core.records import Summary
from todeval.errors import BadInputError
from todeval.runner.store import RunDirectory

ROOT = Path(__file__).resolve().parents[2]
DAMD = ROOT / "tests" / "fixtures" / "multiwoz_predictions" / "damd.json.gz"


def _fill_the_disk_half_way(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on every atomic write puts half its bytes on disk, then fails as a full disk
    does; returns the list of sizes attempted."""
    attempts: list[int] = []

    def half_then_enospc(fh: BinaryIO, payload: bytes) -> None:
        attempts.append(len(payload))
        fh.write(payload[: len(payload) // 2])
        fh.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write_all", half_then_enospc)
    return attempts


def _listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_write_atomic_keeps_the_previous_file_on_a_failed_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.json"
    write_atomic(target, '{"good": true}\n')
    target.chmod(0o640)
    before = target.read_bytes()
    _fill_the_disk_half_way(monkeypatch)
    with pytest.raises(OSError) as failed:
        write_atomic(target, "x" * 100_000)
    assert failed.value.errno == errno.ENOSPC
    assert target.read_bytes() == before
    assert _listing(tmp_path) == ["out.json"]  # no temporary file left behind
    with pytest.raises(BadInputError, match=r"cannot write .*out\.json \(No space left"):
        write_output(target, "y" * 10)
    monkeypatch.undo()
    write_atomic(target, "new\n")  # a replaced file keeps its mode
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o640
    with pytest.raises(BadInputError, match="it is a directory"):
        write_output(tmp_path, "z")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    made = []
    for seed in ("0", "1"):
        out = root / f"run-{seed}"
        argv = ["run", "booking", "--limit", "6", "--limit-mode", "first", "--seed", seed]
        assert main([*argv, "--out", str(out), "--quiet"]) == 0
        made.append(out)
    return made[0], made[1]


Command = Callable[[tuple[Path, Path], Path, str], list[str]]


def _report(runs: tuple[Path, Path], out: Path, variant: str) -> list[str]:
    return ["report", str(runs[0]), "--title", f"report {variant}", "-o", str(out)]


def _compare(runs: tuple[Path, Path], out: Path, variant: str) -> list[str]:
    return ["compare", str(runs[0]), str(runs[1]), "--resamples", variant, "-o", str(out)]


def _incar(runs: tuple[Path, Path], out: Path, variant: str) -> list[str]:
    predictions = out.parent / "incar-gold.json"
    if not predictions.exists():
        export = ["data", "incar", "--export", "--predictions-format", "-o", str(predictions)]
        assert main(export) == 0
    return ["score", "incar", str(predictions), "--resamples", variant, "-o", str(out)]


def _multiwoz(runs: tuple[Path, Path], out: Path, variant: str) -> list[str]:
    return ["score", "multiwoz", str(DAMD), "--metrics", "bleu", "--resamples", variant, "-o",
            str(out)]  # fmt: skip


def _annotate(runs: tuple[Path, Path], out: Path, variant: str) -> list[str]:
    return ["annotate", "export", "--from", "bargain:casino", "--n", variant, "-o", str(out)]


COMMANDS: dict[str, tuple[Command, str]] = {
    "report": (_report, "report.html"),
    "compare": (_compare, "comparison.json"),
    "score-incar": (_incar, "incar.json"),
    "score-multiwoz": (_multiwoz, "multiwoz.json"),
    "annotate-export": (_annotate, "items.jsonl"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_full_disk_mid_write_keeps_the_previous_output_exit_3(
    name: str,
    runs: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    command, file_name = COMMANDS[name]
    out = tmp_path / "outputs" / file_name
    out.parent.mkdir()
    assert main(command(runs, out, "20")) == 0
    written = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    assert written[file_name]
    capsys.readouterr()
    attempts = _fill_the_disk_half_way(monkeypatch)
    assert main(command(runs, out, "30")) == 3
    err = capsys.readouterr().err
    # (score multiwoz warns first that the DAMD file lacks a dialogue)
    lines = [x for x in err.strip().splitlines() if not x.startswith("todeval: warning: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"todeval: error: cannot write {out}")
    assert "(No space left on device)" in lines[0]
    assert attempts, "the output did not go through write_atomic"
    # the previous output (and, for an export, its key file) byte for byte; nothing else
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == written


def test_summary_and_manifest_are_replaced_whole(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    store = RunDirectory(run)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    summary = Summary.model_validate_json((run / "summary.json").read_text())
    manifest = store.read_manifest()
    _fill_the_disk_half_way(monkeypatch)
    with pytest.raises(BadInputError, match=r"cannot write .* \(No space left on device\)"):
        store.write_summary(summary)
    with pytest.raises(BadInputError, match=r"cannot write .* \(No space left on device\)"):
        store.write_manifest(manifest)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def _in_small_tmpfs(mount: Path, size: str, script: str) -> list[str]:
    """``script`` in a private mount namespace with a tmpfs of ``size`` on ``mount`` (gone with
    the process). Skips where no tmpfs can be mounted; CI must allow it."""
    unshare = shutil.which("unshare")
    flags = "-m" if os.geteuid() == 0 else "-rm"
    reason = "unshare (util-linux) is missing"
    if unshare is not None:
        probe = subprocess.run(
            [unshare, flags, "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {mount}"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0:
            mounted = f"mount -t tmpfs -o size={size} tmpfs {mount} && {script}"
            return [unshare, flags, "sh", "-c", mounted]
        reason = f"cannot mount a tmpfs here ({probe.stderr.strip()})"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(f"{reason}: the simulated full disk above covers the same path")


def test_report_on_a_real_full_disk_keeps_the_previous_report(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    mount, kept = tmp_path / "small", tmp_path / "kept"
    mount.mkdir()
    kept.mkdir()
    report = [sys.executable, "-m", "todeval", "report", str(runs[0])]
    small, big = [*report, "--transcripts", "0"], [*report, "--transcripts", "all"]
    sizes = []
    for argv in (small, big):
        assert main([*argv[3:], "-o", str(tmp_path / "probe.html")]) == 0
        sizes.append((tmp_path / "probe.html").stat().st_size)
    assert sizes[1] > sizes[0] * 1.2
    # the disk holds the small report and half the big one: the big one cannot be written
    disk_kb = (sizes[0] + sizes[1] // 2) // 1024 + 4
    target = f"-o {mount}/r.html"
    script = (
        f"{' '.join(small)} {target} > /dev/null && cp {mount}/r.html {kept}/before.html && "
        f"{' '.join(big)} {target} 2> {kept}/err; rc=$?; cp {mount}/r.html {kept}/after.html; "
        f"ls -A {mount} > {kept}/listing; exit $rc"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        _in_small_tmpfs(mount, f"{disk_kb}k", script), env=env, capture_output=True, timeout=300
    )
    err = (kept / "err").read_text().strip().splitlines()
    assert proc.returncode == 3, (proc.stderr, err)
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert "(No space left on device)" in err[0] and "previous file there is unchanged" in err[0]
    assert (kept / "after.html").read_bytes() == (kept / "before.html").read_bytes()
    assert len((kept / "before.html").read_bytes()) == sizes[0]
    assert (kept / "listing").read_text().split() == ["r.html"]  # no temporary file left
