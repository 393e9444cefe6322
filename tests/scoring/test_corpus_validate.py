"""``todeval validate multiwoz`` and ``todeval validate incar`` (issue 26): prediction files
without the skill score low, the gold high; the published metrics' known weaknesses are
measured and said in the suites' notes (the scorers stay exact to the originals)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main


@pytest.mark.parametrize("suite", ["multiwoz", "incar"])
def test_validate_the_corpus_scorers(
    suite: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"{suite}.json"
    assert main(["validate", suite, "-o", str(out), "--out", str(tmp_path / "v")]) == 0
    report = json.loads(out.read_text())
    assert report["passed"] and {r["name"] for r in report["results"]} == {
        "empty", "copy-user", "constant", "dump", "gold"
    }  # fmt: skip
    assert (tmp_path / "v" / "gold" / "predictions.json").exists()
    assert "Known weakness" in capsys.readouterr().out
