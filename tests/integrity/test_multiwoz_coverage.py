"""Finding 13 of issue 16: ``score multiwoz`` on a file missing dialogues says so (how many,
and that they are not scored), and the header's active-domains field says what was used."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli import main
from todeval.core.records import Summary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"


@pytest.fixture(scope="module")
def augpt() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((FIXTURES / "augpt.json.gz").read_bytes()))
    return data


def _score(tmp_path: Path, data: dict[str, Any], *extra: str) -> tuple[int, Summary]:
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "summary.json"
    code = main(["score", "multiwoz", str(pred), "--metrics", "inform,success", "--serial",
                 "--resamples", "50", "-o", str(out), *extra])  # fmt: skip
    return code, Summary.model_validate_json(out.read_text("utf-8"))


def summary_file(tmp_path: Path) -> str:
    return (tmp_path / "summary.json").read_text("utf-8")


def test_missing_dialogues_are_counted_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], augpt: dict[str, Any]
) -> None:
    data = dict(augpt)
    dropped = sorted(data)[:1]
    for key in dropped:
        del data[key]
    code, summary = _score(tmp_path, data)
    captured = capsys.readouterr()
    assert code == 0
    warning = [line for line in captured.err.splitlines() if "missing" in line]
    assert warning == [
        f"todeval: warning: 1 of 1000 test dialogues are missing from the predictions "
        f"({dropped[0]}) and are not scored: every figure is over the 999 given dialogues (as "
        "the standard evaluator does), not comparable with a full test-set score as it is"
    ]
    assert "dialogues: 999 (1 test dialogue missing, not scored)" in captured.out
    assert summary.n_episodes == 999 and summary.excluded == {}
    assert json.loads(summary_file(tmp_path))["missing_dialogues"] == 1
    assert "active domains: given\n" in captured.out + "\n"


def test_many_missing_dialogues_and_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], augpt: dict[str, Any]
) -> None:
    keys = sorted(augpt)[:20]
    data = {k: augpt[k] for k in keys}
    data[keys[0]] = data[keys[0]][:1]  # a dialogue cut after its first turn
    cut = len(augpt[keys[0]]) - 1
    code, _ = _score(tmp_path, data)
    captured = capsys.readouterr()
    assert code == 0
    assert "980 of 1000 test dialogues are missing from the predictions and are not scored" in (
        captured.err
    )
    assert f"{cut} system turns are missing at the end of given dialogues" in captured.err
    raw = json.loads(summary_file(tmp_path))
    assert (raw["missing_dialogues"], raw["missing_turns"]) == (980, cut)


def test_header_says_the_active_domains_were_estimated_when_none_are_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], augpt: dict[str, Any]
) -> None:
    data = {k: augpt[k] for k in sorted(augpt)[:10]}
    turns = sum(len(t) for t in data.values())
    no_domains = {k: [{**t, "active_domains": None} for t in v] for k, v in data.items()}
    for turns_ in no_domains.values():
        for turn in turns_:
            del turn["active_domains"]
    code, _ = _score(tmp_path, no_domains)
    captured = capsys.readouterr()
    assert code == 0
    assert (
        "active domains: estimated from state changes for every turn (the file gives none)"
        in captured.out
    )
    assert f"active domains estimated from state changes for {turns} of {turns} turns" in (
        captured.err
    )
    first = next(iter(data))
    half = dict(data)
    half[first] = [{k: v for k, v in t.items() if k != "active_domains"} for t in data[first]]
    code, _ = _score(tmp_path, half)
    out = capsys.readouterr().out
    n = len(data[first])
    assert f"active domains: given for {turns - n} turns, estimated from state changes for {n}" in (
        out
    )
