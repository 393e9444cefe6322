"""``todeval score incar`` / ``todeval data incar``: outputs, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli import main
from todeval.core.records import Summary


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _export(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Path:
    path = tmp_path / "gold.json"
    code, _, _ = _run(["data", "incar", "--export", *extra, "-o", str(path)], capsys)
    assert code == 0
    return path


def test_export_and_score_gold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predictions = _export(tmp_path, capsys, "--predictions-format")
    out_file = tmp_path / "summary.json"
    code, out, err = _run(
        ["score", "incar", str(predictions), "--resamples", "50", "-o", str(out_file)], capsys
    )
    assert code == 0, err
    assert (
        "Match" in out and "Combined (lineage: GALAXY KvretEvaluator)" in out and "navigate" in out
    )
    assert "BLEU (modern: sacrebleu 13a)" in out  # both BLEU variants, labelled (issue 19)
    summary = Summary.model_validate_json(out_file.read_text(encoding="utf-8"))
    assert summary.benchmark == "incar"
    assert summary.metrics["incar.match"].micro.value == pytest.approx(100.0)
    assert summary.metrics["incar.succ_f1"].micro.value == pytest.approx(100.0, abs=1e-4)
    assert summary.ci.resamples == 50


def test_export_full_gold_dev(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _export(tmp_path, capsys, "--split", "dev")
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["split"] == "dev" and len(document["dialogues"]) == 302
    assert document["requestable"]["weather"] == ["weather_attribute"]


def test_data_without_export_prints_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["data", "incar"], capsys)
    assert code == 0 and "304 dialogues" in out and "808 system turns" in out


def test_export_without_output_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["data", "incar", "--export"], capsys)
    assert code == 2 and "-o" in err


GOOD_TURN = {"response": "ok .", "state": {}}
BAD_INPUTS: list[tuple[str, Any, str]] = [
    ("invalid-json", "{not json", "invalid JSON"),
    ("empty-file", "", "empty file"),
    ("empty-object", {}, "no dialogues"),
    ("top-level-list", [GOOD_TURN], "expected a JSON object"),
    ("unknown-id", {"9999": [GOOD_TURN]}, "unknown dialogue id '9999'"),
    ("uuid-as-id", {"e6a4e9dc-a952-47dc-bb7f-3586cdb1c3ff": [GOOD_TURN]}, "unknown dialogue id"),
    ("turns-not-list", {"0": "ok"}, "expected a list of turns"),
    ("no-turns", {"0": []}, "no turns"),
    ("too-many-turns", {"0": [GOOD_TURN] * 50}, "50 turns given"),
    ("turn-not-object", {"0": ["ok ."]}, "expected an object"),
    ("missing-response", {"0": [{"state": {}}]}, "missing 'response'"),
    ("response-not-string", {"0": [{"response": 3}]}, "'response' must be a string"),
    ("state-not-object", {"0": [{"response": "x", "state": ["a"]}]}, "'state' must be an object"),
    ("state-value", {"0": [{"response": "x", "state": {"event": 1}}]}, "must be a string"),
    ("unknown-key", {"0": [{"response": "x", "respnse": "y"}]}, "unknown key 'respnse'"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_malformed_predictions_exit_3_with_one_line(
    name: str, content: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    code, out, err = _run(["score", "incar", str(path)], capsys)
    assert code == 3
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("todeval: error: ")
    assert message in lines[0]
    assert "Traceback" not in err


def test_missing_prediction_file_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(["score", "incar", str(tmp_path / "nope.json")], capsys)
    assert code == 3 and "cannot read" in err and len(err.strip().splitlines()) == 1


def test_bad_split_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"0": [GOOD_TURN]}), "utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["score", "incar", str(path), "--split", "train"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
