"""``todeval validate clarq``: every floor control (dump, echo + dump, cycle, repeated purpose,
generic list, wrong, quitter) at S <= 0.10 and the privileged oracle at SPQ >= 0.95, on all 260
test tasks in English and in Chinese against the offline rule provider (issue 26); the sweep
and bag families searched at CI's budget, their best agent at SPQ <= 0.10 (issue 41).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main


def test_validate_clarq_passes_in_both_languages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "clarq.json"
    assert main(["validate", "clarq", "--quiet", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    results = {r["name"]: r for r in report["results"]}
    for lang in ("en", "zh"):
        for floor in ("dump", "echo-dump", "cycle", "repeat-purpose", "generic", "wrong"):
            result = results[f"{floor}/{lang}"]
            assert result["n"] == 260 and result["value"] <= 0.10, result
        assert results[f"oracle/{lang}"]["value"] >= 0.95
        assert results[f"oracle/{lang}"]["metric"] == "clarq.success_economy"
    searched = {a["name"]: a for a in report["adversaries"]}
    assert set(searched) == {"sweep/en", "sweep/zh", "bag/en", "bag/zh"}
    for family in searched.values():
        assert family["passed"] and family["best"]["value"] <= 0.10, family["best"]
        assert len(family["trials"]) >= (5 if family["name"].startswith("sweep") else 4)
    assert "FAIL" not in capsys.readouterr().out
