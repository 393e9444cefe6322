"""Bargaining submissions: candidate lists drawn again with the run's recorded key, every
labelled turn present, counts scored again (issue 45.4)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from tests.submission.helpers import Record, archive, edited, run, verdict_of
from todeval.benchmarks.bargain.data import key_fingerprint


@pytest.fixture(scope="module")
def bargain_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bargain") / "run"
    config = {"track": "scripted", "labeller": "copy-example", "k": 5, "limit": 4}
    return run("bargain", config, out)


def _reasons(path: Path) -> str:
    verdict = verdict_of(path)
    assert verdict.status == "refused", verdict.lines()
    return "\n".join(verdict.reasons)


def test_an_honest_run_is_verified(bargain_run: Path, tmp_path: Path) -> None:
    verdict = verdict_of(archive(bargain_run, tmp_path / "g.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert "option k = 5 (standard: 20)" in verdict.custom
    assert any("recorded key" in line for line in verdict.checked)


def test_a_changed_candidate_list_is_refused(bargain_run: Path, tmp_path: Path) -> None:
    def edit(records: list[Record]) -> list[Record]:
        turn = records[0]["details"]["turns"][0]
        turn["candidates"] = [c for c in turn["candidates"] if c not in turn["gold"]][:1] + [
            c for c in turn["candidates"] if c in turn["gold"]
        ]
        return records

    assert "turn 1: turn " in _reasons(edited(bargain_run, tmp_path, edit))


def test_a_left_out_turn_is_refused(bargain_run: Path, tmp_path: Path) -> None:
    def edit(records: list[Record]) -> list[Record]:
        records[0]["details"]["turns"] = records[0]["details"]["turns"][1:]
        return records

    assert "labelled turns" in _reasons(edited(bargain_run, tmp_path, edit))


def test_another_key_or_none_is_refused(bargain_run: Path, tmp_path: Path) -> None:
    def other_key(folder: Path) -> None:
        key = secrets.token_bytes(32)
        body = {"keys": {key_fingerprint(key): key.hex()}}
        (folder / "candidate-keys.json").write_text(json.dumps(body), encoding="utf-8")

    assert "not recorded" in _reasons(edited(bargain_run, tmp_path, files=other_key))

    def no_key(folder: Path) -> None:
        (folder / "candidate-keys.json").unlink()

    assert "cannot be replayed" in _reasons(edited(bargain_run, tmp_path, files=no_key))
