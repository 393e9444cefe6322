"""An LLM judge on an annotation export (issue 29.7): it answers every item as an annotator
would, its calls' tokens, cost and latency are printed, and its answers meet people's in
``agreement`` and ``ppi``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli import main

SCRIPT = {
    "rules": [{"match": ">>> [^\\n]*([Hh]ello|[Hh]i )", "reply": '{"choice": ["small-talk"]}'}],
    "default": '{"choice": ["non-strategic"]}',
}


def test_a_judge_answers_an_export_and_is_checked_against_people(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.jsonl"
    argv = ["annotate", "export", "--from", "bargain:casino", "--n", "40", "-o", str(items)]
    assert main(argv) == 0
    script = tmp_path / "judge.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    judged = tmp_path / "judge-answers.jsonl"
    argv = ["annotate", "judge", str(items), "--judge-model", f"scripted:{script}", "--no-cache"]
    assert main([*argv, "-o", str(judged)]) == 0
    out = capsys.readouterr().out
    assert "answered 40 of 40 items" in out and "calls 40" in out and "cost $" in out
    answers = [json.loads(line) for line in judged.read_text().splitlines()]
    assert len(answers) == 40 and all(a["annotator"].startswith("judge-") for a in answers)
    # a person labels the first 12 items from the gold (people are right, the judge is not)
    key = {
        k["id"]: k["gold"]
        for k in map(json.loads, (tmp_path / "items.key.jsonl").read_text().splitlines())
    }
    person = tmp_path / "alice.jsonl"
    lines = [
        json.dumps({"item": a["item"], "annotator": "alice", "choice": key[a["item"]]})
        for a in answers[:12]
    ]
    person.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert (
        main(
            [
                "annotate",
                "ppi",
                str(person),
                "--judge",
                str(judged),
                "--positive",
                "non-strategic",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["items"] == 40 and report["labelled"] == 12
    assert report["judge"] == answers[0]["annotator"]
    e = report["estimate"]
    assert e["ppi"]["ci_low"] <= e["ppi"]["value"] <= e["ppi"]["ci_high"]
    assert e["judge_only"]["n"] == 40 and e["people_only"]["n"] == 12
