"""``--prompts DIR`` reads only regular UTF-8 template files inside DIR (issue 42): a dangling
symlink, a directory named like a template, a device, a symlink to ``/proc/self/environ`` or
to a file outside DIR, a file that is not UTF-8 or is too large: each a one-line error (exit 3),
never a run on the packaged prompt with exit 0, and nothing of the environment written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.dialogue.prompts import MAX_TEMPLATE_BYTES

NAME = "monolithic_system.txt"  # a template the monolithic booking system reads


def _dangling(d: Path) -> None:
    (d / NAME).symlink_to(d / "nowhere.txt")


def _directory(d: Path) -> None:
    (d / NAME).mkdir()


def _dev_zero(d: Path) -> None:
    (d / NAME).symlink_to("/dev/zero")


def _environ(d: Path) -> None:
    (d / NAME).symlink_to("/proc/self/environ")


def _outside(d: Path) -> None:
    outside = d.parent / "outside.txt"
    outside.write_text("You are $name.")
    (d / NAME).symlink_to(outside)


def _latin1(d: Path) -> None:
    (d / NAME).write_bytes(b"You are a caf\xe9 assistant.\n")


def _huge(d: Path) -> None:
    (d / NAME).write_bytes(b"x" * (MAX_TEMPLATE_BYTES + 1))


def _fifo(d: Path) -> None:
    os.mkfifo(d / NAME)


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "dangling symlink": (_dangling, "symlink to nothing"),
    "directory": (_directory, "is a directory"),
    "dev zero": (_dev_zero, "not a regular file"),
    "proc environ": (_environ, "leaves"),
    "outside the folder": (_outside, "leaves"),
    "not utf-8": (_latin1, ":1:14: the prompt template is not UTF-8"),
    "too large": (_huge, "larger than"),
    "fifo": (_fifo, "not a regular file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_template_that_cannot_be_read_safely_is_refused(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TODEVAL_CANARY_ENV", "canary-environment-value")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    make, message = CASES[case]
    make(prompts)
    out = tmp_path / "run"
    code = main(["run", "booking", "--system", "monolithic", "--system-model",
                 "scripted:echo", "--prompts", str(prompts), "--limit", "1", "--quiet",
                 "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err, err
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()
                       and not p.is_symlink() and p.parent != prompts)  # fmt: skip
    assert b"canary-environment-value" not in written


def test_a_symlink_inside_the_folder_is_read(tmp_path: Path) -> None:
    from todeval.dialogue.prompts import read_overrides

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "real.txt").write_text("Hello $name.\n")
    (prompts / "alias.txt").symlink_to(prompts / "real.txt")
    assert read_overrides(prompts) == {"alias": "Hello $name.", "real": "Hello $name."}
