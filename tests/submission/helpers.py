"""Runs, archives and hand edits for the submission tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import todeval.api as td
from todeval.cli import main
from todeval.submission.verify import Verdict, prepare, verify

Record = dict[str, Any]


def run(benchmark: str, config: dict[str, Any], out: Path) -> Path:
    td.run(benchmark, config, out=str(out))
    return out


def archive(run_dir: Path, out: Path) -> Path:
    prepare(run_dir, out, description="test system", model="none")
    return out


def edited(
    run_dir: Path,
    tmp: Path,
    edit: Callable[[list[Record]], list[Record]] = list,
    *,
    files: Callable[[Path], None] | None = None,
) -> Path:
    """A copy of ``run_dir`` whose episode lines went through ``edit`` (hand edits) and whose
    folder went through ``files``, prepared again: the archive's hashes are right, only the
    checks and the replay can tell."""
    copy = tmp / f"edited-{len(list(tmp.iterdir()))}"
    shutil.copytree(run_dir, copy)
    if files is not None:
        files(copy)
    path = copy / "episodes.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines = [json.dumps(r, ensure_ascii=False) for r in edit(records)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return archive(copy, tmp / f"{copy.name}.tar.gz")


def verdict_of(path: Path) -> Verdict:
    return verify(path)


def cli(*args: str) -> int:
    return main(list(args))
