"""Corpus turn runs as submissions: the prediction file must be the records' predictions, every
gold turn predicted, and the corpus scores re-computed from the records (issue 45.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.corpus_runs.helpers import incar_gold, json_replies, run, runtime
from tests.submission.helpers import Record, archive, edited, verdict_of
from todeval.benchmarks.incar_turns.run import SPEC, IncarTurnsConfig


@pytest.fixture(scope="module")
def turns_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _, table, _ = incar_gold(6)
    out = tmp_path_factory.mktemp("turns") / "run"
    config = IncarTurnsConfig(model="scripted:test", limit=6, limit_mode="first")
    run(SPEC.plan(config, runtime(out, json_replies(table))), out)
    return out


def _reasons(path: Path) -> str:
    verdict = verdict_of(path)
    assert verdict.status == "refused", verdict.lines()
    return "\n".join(verdict.reasons)


def test_an_honest_run_is_verified(turns_run: Path, tmp_path: Path) -> None:
    verdict = verdict_of(archive(turns_run, tmp_path / "t.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert any("prediction file equal" in line for line in verdict.checked)


def test_an_edited_prediction_file_is_refused(turns_run: Path, tmp_path: Path) -> None:
    def edit_file(folder: Path) -> None:
        path = folder / "predictions.json"
        predictions = json.loads(path.read_text("utf-8"))
        first = next(iter(predictions))
        predictions[first][0]["response"] = "a better answer"
        path.write_text(json.dumps(predictions), encoding="utf-8")

    assert "predictions.json" in _reasons(edited(turns_run, tmp_path, files=edit_file))


def test_a_left_out_turn_and_an_edited_response_are_refused(
    turns_run: Path, tmp_path: Path
) -> None:
    def drop(records: list[Record]) -> list[Record]:
        record = next(r for r in records if len(r["details"]["turns"]) > 1)
        record["details"]["turns"] = record["details"]["turns"][:-1]
        return records

    assert "predicted turns, the dialogue has" in _reasons(edited(turns_run, tmp_path, drop))

    def worse(records: list[Record]) -> list[Record]:
        records[0]["details"]["turns"][0]["response"] = "nothing like the gold"
        return records

    # the records no longer give the stored corpus scores (nor the prediction file)
    assert "re-computed" in _reasons(edited(turns_run, tmp_path, worse))
