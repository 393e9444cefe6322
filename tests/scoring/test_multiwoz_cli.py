"""``todeval score multiwoz``: output, and one clear error line for every malformed file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli import main
from todeval.core.records import Summary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"


def _augpt(n: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((FIXTURES / "augpt.json.gz").read_bytes()))
    return dict(list(data.items())[:n])


def _write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


def test_scores_a_file_and_writes_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred = _write(tmp_path, "pred.json", _augpt(40))
    out = tmp_path / "out.json"
    code = main(["score", "multiwoz", str(pred), "-o", str(out), "--resamples", "200"])
    captured = capsys.readouterr()
    assert code == 0
    assert "standard MultiWOZ evaluator (Nekvinda & Dusek 2021)" in captured.out
    assert "Inform" in captured.out and "BLEU" in captured.out and "restaurant" in captured.out
    raw = json.loads(out.read_text("utf-8"))
    summary = Summary.model_validate(raw)
    assert summary.benchmark == "multiwoz"
    assert summary.n_episodes == 40
    assert raw["scheme"] == "standard MultiWOZ evaluator (Nekvinda & Dusek 2021)"
    assert raw["options"]["active_domains"] == "given"
    assert summary.ci.resamples == 200
    names = set(summary.metrics)
    assert {"multiwoz.inform", "multiwoz.success", "multiwoz.bleu", "multiwoz.combined"} <= names
    assert "multiwoz.richness.unique_words" in names
    assert "multiwoz.dst.joint_accuracy" in names
    inform = summary.metrics["multiwoz.inform"]
    assert inform.micro.ci_low is not None and inform.micro.ci_high is not None
    assert inform.micro.value is not None
    assert inform.micro.ci_low <= inform.micro.value <= inform.micro.ci_high
    assert set(inform.by_group) <= {"attraction", "hotel", "restaurant", "taxi", "train"}


def test_gzip_input_and_metric_subset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred = tmp_path / "pred.json.gz"
    pred.write_bytes(gzip.compress(json.dumps(_augpt(10)).encode()))
    out = tmp_path / "o.json"
    code = main(["score", "multiwoz", str(pred), "--metrics", "bleu", "-o", str(out)])
    assert code == 0
    summary = Summary.model_validate_json(out.read_text("utf-8"))
    assert set(summary.metrics) == {"multiwoz.bleu"}
    assert summary.outcomes == {"scored": 10}
    assert "Inform" not in capsys.readouterr().out


def test_placeholders_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred = _write(tmp_path, "p.json", _augpt(5))
    code = main(["score", "multiwoz", str(pred), "--active-domains", "placeholders", "--serial"])
    assert code == 0
    assert "active domains: placeholders" in capsys.readouterr().out


def test_warnings_go_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _augpt(3)
    for turns in data.values():
        for turn in turns:
            turn.pop("state")
    pred = _write(tmp_path, "nostate.json", data)
    assert main(["score", "multiwoz", str(pred)]) == 0
    err = capsys.readouterr().err
    assert "gold MultiWOZ 2.2 states" in err
    assert "dst not scored" in err


def _first(data: dict[str, Any]) -> str:
    return next(iter(data))


BAD_FILES: list[tuple[str, Any, str]] = [
    ("notjson.json", "{not json", "not valid JSON (line 1"),
    ("empty.json", "", "the file is empty"),
    ("blank.json", "  \n", "the file is empty"),
    ("list.json", [1, 2], "top level is a JSON array"),
    ("nothing.json", {}, "contains no dialogues"),
    ("turns.json", {"sng0073": {"response": "x"}},
     "dialogue 'sng0073': input should be a valid list"),
    ("response.json", {"sng0073": [{"response": 5}]}, "dialogue 'sng0073' turn 0: field response"),
    ("noresp.json", {"sng0073": [{"state": {}}]},
     "dialogue 'sng0073' turn 0: field response: field required"),
    ("state.json", {"sng0073": [{"response": "x", "state": {"taxi": {"leave": 5}}}]},
     "dialogue 'sng0073' turn 0: field state.taxi.leave: input should be a valid string"),
    ("domains.json", {"sng0073": [{"response": "x", "active_domains": "taxi"}]},
     "dialogue 'sng0073' turn 0: field active_domains"),
    ("unknown.json", {"sng0073": [], "xyz0001": [], "abc0002": []},
     "2 unknown dialogue id(s) not in the MultiWOZ test set: 'abc0002', 'xyz0001'"),
    ("upper.json", {"SNG0073.json": []}, "write ids in lower case without '.json'"),
    ("long.json", {"sng0073": [{"response": "x"}] * 5},
     "dialogue 'sng0073' has 5 turns; the test set has 4"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "message"), BAD_FILES)
def test_malformed_files_give_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: Any, message: str
) -> None:
    path = _write(tmp_path, name, content)
    code = main(["score", "multiwoz", str(path)])
    err = capsys.readouterr().err
    assert code == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"todeval: error: {path}: ")
    assert message in lines[0]
    assert "Traceback" not in err


def test_missing_and_bad_gzip_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.json"
    assert main(["score", "multiwoz", str(missing)]) == 3
    assert f"{missing}: cannot read the prediction file" in capsys.readouterr().err
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"\x1f\x8bnot really gzip")
    assert main(["score", "multiwoz", str(bad)]) == 3
    assert f"{bad}: not a valid gzip file" in capsys.readouterr().err


def test_unknown_metric_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred = _write(tmp_path, "p.json", _augpt(1))
    assert main(["score", "multiwoz", str(pred), "--metrics", "inform,rouge"]) == 2
    assert "unknown metric 'rouge'" in capsys.readouterr().err


def test_unknown_active_domains_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["score", "multiwoz", "x.json", "--active-domains", "oracle"])
    assert exc.value.code == 2
