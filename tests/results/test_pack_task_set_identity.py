"""A run on a domain pack is named by its pack, task file and digest (issue 42), so boards,
``view`` and ``compare`` keep it apart from MultiWOZ's test set and from other packs, and a
refusal names both task sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main


def test_pack_runs_carry_their_pack_as_task_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack, test = tmp_path / "pack", tmp_path / "test"
    assert main(["run", "booking", "--domain", "car-rental", "--limit", "3", "--quiet",
                 "--out", str(pack)]) == 0  # fmt: skip
    assert main(["run", "booking", "--limit", "3", "--quiet", "--out", str(test)]) == 0
    selection = json.loads((pack / "manifest.json").read_text())["selection"]
    name = selection["task_set"]
    assert name.startswith("car-rental/tasks@") and len(name.split("@")[1]) == 8
    summary = json.loads((pack / "summary.json").read_text())
    assert summary["benchmark"] == "booking"
    capsys.readouterr()
    assert main(["compare", str(test), str(pack)]) == 4
    err = capsys.readouterr().err
    assert "'test'" in err and f"'{name}'" in err
    html = tmp_path / "r.html"
    assert main(["report", str(test), str(pack), "-o", str(html)]) == 0
    page = html.read_text()
    assert "task set test" in page and f"task set {name}" in page  # two boards, not one
